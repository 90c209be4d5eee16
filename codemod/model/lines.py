"""Source lines as Python counts them.

``str.splitlines`` also breaks at form feeds, vertical tabs and a few Unicode
separators, which Python source may contain inside a line: line numbers would drift
from the ones ``ast`` and libcst report. Only ``\\r\\n``, ``\\r`` and ``\\n`` end a line.
"""

from __future__ import annotations

import bisect
import re
from array import array
from itertools import accumulate, islice
from typing import Iterable, Iterator, List, Pattern, Set, Tuple

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str, keepends: bool = True) -> List[str]:
    lines = _LINE.findall(text)
    if keepends:
        return lines
    return [line.rstrip("\r\n") for line in lines]


def line_numbers(text: str, offsets: Iterable[int]) -> Iterator[int]:
    """The line (1-based, as ``\\n`` ends lines) of each of ``offsets``, which
    ascend: counted on from the one before, not from the start each time."""
    line, previous = 1, 0
    for offset in offsets:
        line += text.count("\n", previous, offset)
        previous = offset
        yield line


def distinct(pattern: Pattern[str], text: str, window: int = 1 << 16) -> Set[str]:
    """Every distinct match of ``pattern`` (which matches no line end) in ``text``,
    found a window of lines at a time: a list of every match of a large file first
    would be many times its size."""
    found: Set[str] = set()
    start = 0
    while start < len(text):
        end = text.find("\n", start + window) + 1 or len(text)
        found.update(pattern.findall(text, start, end))
        start = end
    return found


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

    def __len__(self) -> int:
        return len(self.lines)

    def any_between(self, first: int, last: int) -> bool:
        index = bisect.bisect_left(self.lines, first)
        return index < len(self.lines) and self.lines[index] <= last


class LineIndex:
    """Where each line of a text starts (as ``split_lines`` cuts it), eight bytes a
    line: one line is read when asked for, and no list of them all is kept."""

    def __init__(self, text: str, window: int = 1 << 16) -> None:
        self.text = text
        self.starts = array("q", [0])
        start = 0
        while start < len(text):
            end = text.find("\n", start + window) + 1 or len(text)
            lengths = map(len, _LINE.findall(text, start, end))
            self.starts.extend(islice(accumulate(lengths, initial=start), 1, None))
            start = end

    def __len__(self) -> int:
        return len(self.starts) - 1

    def line(self, number: int) -> str:
        """Line ``number`` (1-based) without its end."""
        text = self.text[self.starts[number - 1] : self.starts[number]]
        return text.rstrip("\r\n")
