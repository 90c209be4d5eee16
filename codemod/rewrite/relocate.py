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

import bisect
from collections import Counter
from dataclasses import replace
from itertools import accumulate
from typing import Dict, List, Optional, Sequence, Tuple

from codemod.model.diagnostic import Diagnostic
from codemod.model.lines import LineIndex, split_lines

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
    new_lines: Optional[LineIndex] = None  # made where a report is in a changed span
    moved = []
    spans = sorted(outputs)  # the span of a line by bisection, not a scan of them all
    starts = [start for start, _ in spans]
    seen: Dict[Span, _Span] = {}  # each span's lines, and its texts, read once
    for d in diagnostics:
        line = mapping.get(d.line, d.line)
        index = bisect.bisect_right(starts, d.line) - 1
        span = spans[index] if index >= 0 and d.line <= spans[index][1] else None
        found = None
        if span is not None:
            first = mapping.get(span[0], 0) - local_maps[span][1] + 1  # its output
            new_lines = LineIndex(code) if new_lines is None else new_lines
            found = _found(d, lines, new_lines, span, outputs[span], first, line, seen)
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


class _Span:
    """A changed span's lines before and after, each side joined by newlines, and
    each text's occurrences in them found once: a span of 5,000 statements is
    searched once per text, not once per site in it."""

    def __init__(self, before: List[str], after: List[str]) -> None:
        self.sides = [_Side(before), _Side(after)]
        self.texts: Dict[str, "_Occurrences"] = {}

    def of(self, text: str) -> "_Occurrences":
        if text not in self.texts:
            self.texts[text] = _Occurrences(*(s.occurrences(text) for s in self.sides))
        return self.texts[text]


class _Side:
    def __init__(self, lines: List[str]) -> None:
        self.joined = "\n".join(lines)
        self.starts = list(accumulate((len(line) + 1 for line in lines), initial=0))

    def occurrences(self, text: str) -> List[Tuple[int, int]]:
        """(0-based line, 0-based column) of each occurrence of ``text`` (no line
        end in it), not overlapping."""
        found = []
        at = self.joined.find(text)
        while at >= 0:
            row = bisect.bisect_right(self.starts, at) - 1
            found.append((row, at - self.starts[row]))
            at = self.joined.find(text, at + len(text))
        return found


class _Occurrences:
    """A text's occurrences before and after: in order, by place, and by line."""

    def __init__(self, old: List[Tuple[int, int]], new: List[Tuple[int, int]]) -> None:
        self.old, self.new = old, new
        self.old_index = {place: k for k, place in enumerate(old)}
        self.old_rows = Counter(row for row, _ in old)
        self.new_by_row: Dict[int, List[int]] = {}
        for row, col in new:
            self.new_by_row.setdefault(row, []).append(col)


def _found(
    d: Diagnostic,
    lines: Sequence[str],
    new_lines: LineIndex,
    span: Span,
    output: List[str],
    first: int,
    line: int,
    seen: Dict[Span, _Span],
) -> Optional[Tuple[int, int]]:
    """(line, column) of the site in the new text, 1-based; None when unsure."""
    text = _text(d, lines)
    if not text.strip():
        return None
    if span not in seen:
        before = [line.rstrip("\r\n") for line in lines[span[0] - 1 : span[1]]]
        seen[span] = _Span(before, split_lines("".join(output), False))
    found = seen[span].of(text)
    old, new = found.old, found.new
    place = (d.line - span[0], d.col - 1)
    if place in found.old_index and len(old) == len(new):
        row, col = new[found.old_index[place]]
        candidate = (first + row, col + 1)
    else:  # the only one on its line, before and after
        on_line = found.new_by_row.get(line - first, [])
        if found.old_rows[place[0]] != 1 or len(on_line) != 1:
            return None
        candidate = (line, on_line[0] + 1)
    number, col = candidate
    if not 1 <= number <= len(new_lines):
        return None
    if new_lines.line(number)[col - 1 : col - 1 + len(text)] != text:
        return None  # the file moved under the span (an import removed): unsure
    return candidate
