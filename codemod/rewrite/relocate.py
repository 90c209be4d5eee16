"""Where a site left as it is sits in the rewritten file.

A report points into the file torchport wrote. Its line moves with the lines around
it (the device binding inserted above, a statement black split); inside a changed
statement its column moves too: ``x = a.cuda() + torch.cuda.memory._snapshot()``
becomes ``x = a.to(_DEVICE()) + ...``, and a second statement on the line may go to
a line of its own. The site's own text is left as it was, so it is found again in
what the statement became: as the same occurrence of that text (the k-th of the
statement before and after, when both hold as many), or as the only one on its
line. Where neither holds, the report keeps its line's place and its column.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Optional, Sequence, Tuple

from codemod.model.diagnostic import Diagnostic
from codemod.model.lines import split_lines

Span = Tuple[int, int]


def in_output(
    diagnostics: Sequence[Diagnostic],
    lines: Sequence[str],
    code: str,
    mapping: Dict[int, int],
    outputs: Dict[Span, List[str]],
    local_maps: Dict[Span, List[int]],
) -> List[Diagnostic]:
    """``diagnostics`` (lines and columns of ``lines``) placed in ``code``, which
    ``mapping`` (line -> line) and the changed spans' ``outputs`` made of them."""
    new_lines = split_lines(code, False)
    moved = []
    for d in diagnostics:
        line = mapping.get(d.line, d.line)
        span = next((s for s in outputs if s[0] <= d.line <= s[1]), None)
        found = None
        if span is not None:
            first = mapping.get(span[0], 0) - local_maps[span][1] + 1  # its output
            found = _found(d, lines, new_lines, span, outputs[span], first, line)
        if found is None:
            moved.append(replace(d, line=line))
            continue
        line, col = found
        end_col = d.end_col
        if d.span_lines == 0 and end_col is not None:
            end_col = col + (end_col - d.col)
        moved.append(replace(d, line=line, col=col, end_col=end_col))
    return moved


def _text(d: Diagnostic, lines: Sequence[str]) -> str:
    """The site's text on its first line."""
    source = lines[d.line - 1].rstrip("\r\n")
    if d.span_lines == 0 and d.end_col is not None:
        return source[d.col - 1 : d.end_col - 1]
    return source[d.col - 1 :].rstrip()


def _occurrences(text: str, lines: Sequence[str]) -> List[Tuple[int, int]]:
    """(0-based line, 0-based column) of each occurrence of ``text`` in ``lines``."""
    found = []
    for number, line in enumerate(lines):
        at = line.find(text)
        while at >= 0:
            found.append((number, at))
            at = line.find(text, at + len(text))
    return found


def _found(
    d: Diagnostic,
    lines: Sequence[str],
    new_lines: Sequence[str],
    span: Span,
    output: List[str],
    first: int,
    line: int,
) -> Optional[Tuple[int, int]]:
    """(line, column) of the site in the new text, 1-based; None when unsure."""
    text = _text(d, lines)
    if not text.strip():
        return None
    before = [line.rstrip("\r\n") for line in lines[span[0] - 1 : span[1]]]
    after = split_lines("".join(output), False)
    old = _occurrences(text, before)
    new = _occurrences(text, after)
    place = (d.line - span[0], d.col - 1)
    if place in old and len(old) == len(new):
        row, col = new[old.index(place)]
        candidate = (first + row, col + 1)
    else:  # the only one on its line, before and after
        on_line = [c for r, c in new if first + r == line]
        if len([p for p in old if p[0] == place[0]]) != 1 or len(on_line) != 1:
            return None
        candidate = (line, on_line[0] + 1)
    number, col = candidate
    if not 1 <= number <= len(new_lines):
        return None
    if new_lines[number - 1][col - 1 : col - 1 + len(text)] != text:
        return None  # the file moved under the span (an import removed): unsure
    return candidate
