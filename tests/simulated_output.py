"""Comparing what a program printed on the CPU with what it printed on tpsim.

``compare(cpu, tpsim, by_design)`` says whether two stdouts are the same output, after
three steps and nothing more:

1. **What the table says differs by design** (``ByDesign``, one entry per case, in
   tests/test_simulated_runs.py): each ``(cpu_text, tpsim_text)`` pair replaces that
   text of the tpsim output with the CPU's, and each regular expression in ``masks``
   replaces what it matches on both sides by ``<masked>``. Every pair and mask must
   find its text, so an entry that no longer applies fails.
2. **Device names**, on the tpsim side only: ``tpsim`` and ``tpsim:N`` read ``cpu``, a
   tensor's ``, device='tpsim:N'`` (which the CPU's tensors never print) is dropped and
   ``device(type='tpsim', index=N)`` reads ``device(type='cpu')``. No other token.
3. **Numbers**: the text around the numbers must be equal; integers must be equal;
   other numbers may differ by a relative 1e-3, or by one unit of the last digit
   printed (two runs may round the same value either way). The simulator runs torch's
   own CPU kernels, so the same program on the same data prints the same digits; the
   tolerance is for a different order of summation, never for different data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

MASK = "<masked>"
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_DEVICE_NAMES = (
    (re.compile(r", device='tpsim(?::\d+)?'"), ""),
    (re.compile(r"device\(type='tpsim'(?:, index=\d+)?\)"), "device(type='cpu')"),
    (re.compile(r"\btpsim(?::\d+)?\b"), "cpu"),
)
RELATIVE = 1e-3


@dataclass(frozen=True)
class ByDesign:
    """Output that differs between the CPU and an accelerator whoever ports the code."""

    reason: str
    pairs: Sequence[Tuple[str, str]] = ()  # (what the CPU prints, what tpsim prints)
    masks: Sequence[str] = ()  # regular expressions (multiline), on both sides


def device_names(text: str) -> str:
    for pattern, replacement in _DEVICE_NAMES:
        text = pattern.sub(replacement, text)
    return text


def _numbers_close(a: str, b: str) -> bool:
    if a == b:
        return True
    if not any(c in a + b for c in ".eE"):
        return False  # integers: equal or different
    x, y = float(a), float(b)
    decimals = [
        len(t.split(".")[1]) for t in (a, b) if "." in t and "e" not in t.lower()
    ]
    last_digit = 10.0 ** -max(decimals) if decimals else 0.0
    scale = max(abs(x), abs(y))
    return abs(x - y) <= max(RELATIVE * scale, last_digit * (1 + 1e-9))


def same_line(cpu: str, tpsim: str) -> bool:
    if _NUMBER.split(cpu) != _NUMBER.split(tpsim):
        return False
    pairs = zip(_NUMBER.findall(cpu), _NUMBER.findall(tpsim))
    return all(_numbers_close(a, b) for a, b in pairs)


def apply_by_design(cpu: str, tpsim: str, by_design: ByDesign) -> Tuple[str, str]:
    """The two outputs with the entry's differences taken out; AssertionError when
    one of its pairs or masks finds nothing."""
    for cpu_text, tpsim_text in by_design.pairs:
        assert cpu_text in cpu, f"the CPU no longer prints {cpu_text!r}"
        assert tpsim_text in tpsim, f"tpsim no longer prints {tpsim_text!r}"
        tpsim = tpsim.replace(tpsim_text, cpu_text)
    for mask in by_design.masks:
        pattern = re.compile(mask, re.MULTILINE)
        assert pattern.search(cpu) or pattern.search(tpsim), f"{mask!r} masks nothing"
        cpu, tpsim = pattern.sub(MASK, cpu), pattern.sub(MASK, tpsim)
    return cpu, tpsim


def first_difference(cpu: str, tpsim: str) -> Optional[Tuple[int, str, str]]:
    """(line number from 1, CPU line, tpsim line) of the first line that differs once
    device names are read alike; ``<end of output>`` past the end of one."""
    left, right = cpu.splitlines(), device_names(tpsim).splitlines()
    raw = tpsim.splitlines()
    for number in range(max(len(left), len(right))):
        a = left[number] if number < len(left) else None
        b = right[number] if number < len(right) else None
        if a is None or b is None or not same_line(a, b):
            shown = raw[number] if number < len(raw) else "<end of output>"
            return number + 1, a if a is not None else "<end of output>", shown
    return None


def compare(
    cpu: str, tpsim: str, by_design: Optional[ByDesign] = None
) -> Optional[Tuple[int, str, str]]:
    """None when the outputs are the same, else the first difference."""
    if by_design is not None:
        cpu, tpsim = apply_by_design(cpu, tpsim, by_design)
    return first_difference(cpu, tpsim)


_LOCATION = re.compile(r"^\S+:\d+: ")
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b")


def error_line(stderr: str) -> str:
    """The line that names the error: the last exception line of the output (without
    the ``path:line:`` the simulator's hint puts before it), else its last line."""
    lines = [_LOCATION.sub("", line) for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if _EXCEPTION.match(line):
            return line
    return lines[-1] if lines else "<no output on stderr>"


def matches(line: str, expected: str) -> bool:
    """An entry's line: the whole line, or its start followed by ``...``."""
    if expected.endswith("..."):
        return line.startswith(expected[:-3])
    return line == expected
