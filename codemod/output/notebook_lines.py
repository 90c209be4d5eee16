"""Where a line of a notebook cell is in the notebook file itself: the line and
column of the ``.ipynb`` JSON text that hold it, for the formats that can only
point into files (SARIF, GitHub annotations).
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Dict, List, Optional, Tuple

_DECODER = json.JSONDecoder()


class NotebookLines:
    """The file positions of a notebook's cell lines; read once per file."""

    def __init__(self) -> None:
        self._files: Dict[str, Optional[List[Optional[List[int]]]]] = {}
        self._texts: Dict[str, Tuple[str, List[int]]] = {}

    def position(
        self, path: str, cell: int, line: int, col: int
    ) -> Optional[Tuple[int, int]]:
        """(line, column) in the file ``path`` of line ``line``, column ``col`` of
        cell ``cell`` (both 1-based, cells counted from 1); None when unknown."""
        starts = self._starts(path)
        if not starts or not 1 <= cell <= len(starts) or starts[cell - 1] is None:
            return None
        lines = starts[cell - 1]
        if not 1 <= line <= len(lines):
            return None
        text, newlines = self._texts[path]
        offset = _offset_of_column(text, lines[line - 1], col)
        before = bisect.bisect_left(newlines, offset)  # newlines before the offset
        line_start = newlines[before - 1] + 1 if before else 0
        return before + 1, offset - line_start + 1

    def _starts(self, path: str):
        if path not in self._files:
            self._files[path] = self._read(path)
        return self._files[path]

    def _read(self, path: str):
        try:
            with open(path, "rb") as handle:
                text = handle.read().decode("utf-8-sig")
            from codemod.run.notebook_json import source_spans

            spans = list(source_spans(text))
        except (OSError, ValueError, IndexError, TypeError, RecursionError):
            return None
        self._texts[path] = (text, [m.start() for m in re.finditer("\n", text)])
        return [_line_starts(text, start, end) for start, end in spans]


def _line_starts(text: str, start: int, end: int) -> Optional[List[int]]:
    """The offset in ``text`` where each line of the "source" value at
    ``start``..``end`` begins (inside its JSON strings)."""
    if start == end:
        return None
    if text[start] == '"':
        return _string_line_starts(text, start)
    if text[start] != "[":
        return None
    # A list of strings is one text: a line starts at the first element, after
    # each newline inside an element, and at the element after one ending in one.
    found: List[int] = []
    at_line_start = True
    i = start + 1
    while i < end:
        if text[i] != '"':
            i += 1
            continue
        value, stop = _DECODER.raw_decode(text, i)
        starts = _string_line_starts(text, i)
        if at_line_start:
            found.append(starts[0])
        found += starts[1:]
        at_line_start = isinstance(value, str) and value.endswith("\n")
        if at_line_start:
            found.pop()  # the position of the closing quote: no line of its own
        i = stop
    return found


def _string_line_starts(text: str, quote: int) -> List[int]:
    """Offsets, in ``text``, where each line of the JSON string at ``quote``
    begins: just after the quote, and after each escaped newline."""
    starts = [quote + 1]
    i = quote + 1
    while i < len(text) and text[i] != '"':
        if text[i] == "\\":
            if text[i + 1] == "n":
                starts.append(i + 2)
            i += 6 if text[i + 1] == "u" else 2
        else:
            i += 1
    return starts


def _offset_of_column(text: str, start: int, col: int) -> int:
    """The offset of character ``col`` (1-based) of the line whose JSON text
    starts at ``start``: escapes count as the one character they stand for."""
    i = start
    for _ in range(col - 1):
        if i >= len(text) or text[i] == '"':
            break
        if text[i] == "\\":
            i += 6 if text[i + 1] == "u" else 2
        else:
            i += 1
    return i
