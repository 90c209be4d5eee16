"""Source lines as Python counts them.

``str.splitlines`` also breaks at form feeds, vertical tabs and a few Unicode
separators, which Python source may contain inside a line: line numbers would drift
from the ones ``ast`` and libcst report. Only ``\\r\\n``, ``\\r`` and ``\\n`` end a line.
"""

from __future__ import annotations

import bisect
import re
from itertools import accumulate
from typing import Iterable, Iterator, List, Tuple

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str, keepends: bool = True) -> List[str]:
    lines = _LINE.findall(text)
    if keepends:
        return lines
    return [line.rstrip("\r\n") for line in lines]


class Spans:
    """Spans of lines (first and last, inclusive), asked whether one holds a line in
    logarithmic time: a question per site over every span would be quadratic."""

    def __init__(self, spans: Iterable[Tuple[int, int]] = ()) -> None:
        self.spans = sorted(set(spans))
        self._starts = [first for first, _ in self.spans]
        self._reach = list(accumulate((last for _, last in self.spans), max))

    def __contains__(self, line: int) -> bool:
        index = bisect.bisect_right(self._starts, line) - 1
        return index >= 0 and self._reach[index] >= line

    def __iter__(self) -> Iterator[Tuple[int, int]]:
        return iter(self.spans)

    def __len__(self) -> int:
        return len(self.spans)


class LineSet:
    """A set of line numbers, asked which of them lie between two lines in
    logarithmic time (a scan of the whole set per statement is quadratic)."""

    def __init__(self, lines: Iterable[int] = ()) -> None:
        self.lines = sorted(set(lines))

    def between(self, first: int, last: int) -> List[int]:
        """The lines from ``first`` to ``last``, both included, in order."""
        lines = self.lines
        return lines[
            bisect.bisect_left(lines, first) : bisect.bisect_right(lines, last)
        ]

    def any_between(self, first: int, last: int) -> bool:
        index = bisect.bisect_left(self.lines, first)
        return index < len(self.lines) and self.lines[index] <= last
