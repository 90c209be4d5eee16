"""The rewritten file is put together a run of copied lines at a time
(``codemod.rewrite.linemap``): the same text, and each line mapped where a
line-by-line assembly puts it."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Dict, List

import pytest

from codemod.model.lines import LineIndex, split_lines
from codemod.rewrite.linemap import assemble


@dataclass
class Insertion:
    after_line: int
    text: str


def line_by_line(lines, outputs, local_maps, added):
    """The text and the mapping, one line at a time: the specification."""
    out: List[str] = []
    mapping: Dict[int, int] = {}
    inserts: Dict[int, List[str]] = {}
    for insertion in added:
        inserts.setdefault(insertion.after_line, []).append(insertion.text)
    starts = {start: (start, end) for start, end in outputs}
    written = 0
    out.extend(inserts.get(0, []))
    written += sum(part.count("\n") for part in inserts.get(0, []))
    number = 1
    while number <= len(lines):
        if number in starts:
            first, last = starts[number]
            for offset, line_number in enumerate(range(first, last + 1), start=1):
                mapping[line_number] = written + local_maps[(first, last)][offset]
            parts = outputs[(first, last)]
        else:
            last = number
            mapping[number] = written + 1
            parts = [lines[number - 1]]
        parts = parts + inserts.get(last, [])
        out.extend(parts)
        written += sum(part.count("\n") for part in parts)
        number = last + 1
    return "".join(out), mapping


def _case(seed: int):
    rng = random.Random(seed)
    ends = ["\n"] * 8 + ["\r\n", "\r"]
    lines = [f"line {i}{rng.choice(ends)}" for i in range(rng.randint(1, 40))]
    if rng.random() < 0.3:
        lines[-1] = lines[-1].rstrip("\r\n")
    outputs, local_maps, number = {}, {}, 1
    while number <= len(lines):
        if rng.random() < 0.2:
            last = min(len(lines), number + rng.randint(0, 3))
            new = [f"new {number}.{k}\n" for k in range(rng.randint(1, 4))]
            outputs[(number, last)] = new
            local_maps[(number, last)] = [0] + [
                rng.randint(1, len(new)) for _ in range(last - number + 2)
            ]
            number = last + 1
        else:
            number += 1
    added = [
        Insertion(rng.randint(0, len(lines) + 1), "x = 1\n\n")
        for _ in range(rng.randint(0, 3))
    ]
    return lines, outputs, local_maps, added


@pytest.mark.parametrize("seed", range(300))
def test_runs_assemble_what_lines_do(seed):
    lines, outputs, local_maps, added = _case(seed)
    source = "".join(lines)
    linear = source.count("\r") == source.count("\r\n")
    code, mapping = assemble(lines, outputs, local_maps, added, linear)
    expected_code, expected = line_by_line(lines, outputs, local_maps, added)
    assert code == expected_code
    assert list(mapping.items()) == list(expected.items())
    for line in range(0, len(lines) + 2):
        assert mapping.get(line, -1) == expected.get(line, -1)
        assert (line in mapping) == (line in expected)


@pytest.mark.parametrize("seed", range(100))
def test_a_line_index_reads_the_lines_split_lines_cuts(seed):
    rng = random.Random(seed)
    text = "".join(rng.choice(["ab", "\n", "\r", "\r\n", " "]) for _ in range(200))
    index = LineIndex(text, window=rng.randint(1, 50))
    lines = split_lines(text, False)
    assert len(index) == len(lines)
    assert [index.line(n) for n in range(1, len(lines) + 1)] == lines
