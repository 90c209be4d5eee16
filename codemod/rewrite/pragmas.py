"""Comments that apply to the line they are on, kept there when black lays out a
changed statement.

flake8 and Ruff read ``# noqa`` on the line they report, mypy reads ``# type:
ignore`` on the first line of a statement, coverage reads ``# pragma: no cover``
there too. Black splits a long statement and puts its trailing comment after the
closing bracket, on the last line, where none of them looks. So such a comment,
at the end of a statement's first line before black, goes back to the end of its
first line after black (after the opening bracket, which black keeps as it is).

torchport reads ``# noqa: TPxxx`` (and a bare ``# noqa``) on the line of the site it
suppresses, which black may move to another line of the statement: a statement
holding a site so suppressed is not laid out by black at all (``unsplit``).
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Dict, Iterable, List, Optional, Tuple

from codemod.model.lines import split_lines
from codemod.model.noqa import noqa_lines

PRAGMA = re.compile(
    r"#\s*(?:noqa\b|type:\s*ignore\b|pragma:|pyright:\s*ignore\b)", re.IGNORECASE
)
LineRange = Tuple[int, int]
_CODE = frozenset(
    {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENCODING,
        tokenize.ENDMARKER,
    }
)


class _Statements:
    """The logical lines of a text: each comment with the first line of the
    statement it ends a line of, and the lines a token runs across."""

    def __init__(self, text: str) -> None:
        self.comments: List[Tuple[str, int, int, int]] = []  # text, row, col, first
        self.spans: List[LineRange] = []  # (first, last) of each statement
        self.crossed: set = set()  # rows whose end lies inside a token
        first: Optional[int] = None
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind, (row, col), (end_row, _) = token.type, token.start, token.end
            if kind == tokenize.COMMENT and first is not None:
                self.comments.append((token.string, row, col, first))
            elif kind == tokenize.NEWLINE and first is not None:
                self.spans.append((first, row))
                first = None
            elif kind not in _CODE:
                first = row if first is None else first
                self.crossed.update(range(row, end_row))
        self.commented = {row for _, row, _, _ in self.comments}


def _statements(text: str) -> Optional[_Statements]:
    try:
        return _Statements(text)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None


def unsplit(
    text: str, ranges: List[LineRange], suppressed: Iterable[int]
) -> List[LineRange]:
    """``ranges`` (the lines black is to lay out) less every statement holding
    one of the lines (``suppressed``) where a ``# noqa`` suppressed a site."""
    noqa = noqa_lines(text)
    suppressing = [line for line in suppressed if line in noqa]
    if not suppressing:
        return ranges
    found = _statements(text)
    if found is None:
        return ranges
    kept = [
        (first, last)
        for first, last in found.spans
        if any(first <= line <= last for line in suppressing)
    ]
    out: List[LineRange] = []
    for start, end in ranges:
        lines = [
            n for n in range(start, end + 1) if not any(a <= n <= b for a, b in kept)
        ]
        for n in lines:  # back into runs of consecutive lines
            if out and out[-1][1] == n - 1 and out[-1][0] >= start:
                out[-1] = (out[-1][0], n)
            else:
                out.append((n, n))
    return out


def on_first_lines(before: str, after: str) -> str:
    """``after`` (black's layout of ``before``) with each comment that applies to
    its line (``PRAGMA``) put back at the end of its statement's first line, where
    it was in ``before`` and black moved it off."""
    if not PRAGMA.search(before):
        return after
    old, new = _statements(before), _statements(after)
    if old is None or new is None:
        return after
    by_text: Dict[str, List[Tuple[int, int, int]]] = {}
    for text, row, col, first in new.comments:
        by_text.setdefault(text, []).append((row, col, first))
    was: Dict[str, List[bool]] = {}
    for text, row, _, first in old.comments:
        was.setdefault(text, []).append(row == first)
    lines = split_lines(after)
    moves = {}  # first row -> (row, col, text)
    for text, placed in by_text.items():
        if not PRAGMA.search(text) or len(was.get(text, ())) != len(placed):
            continue  # not one of them, or not the same comments: leave them
        for on_first, (row, col, first) in zip(was[text], placed):
            if on_first and row != first and first not in new.commented:
                if first not in new.crossed:  # the line can take a comment
                    moves.setdefault(first, (row, col, text))
    for first, (row, col, text) in moves.items():
        lines[row - 1] = _without_comment(lines[row - 1], col)
        lines[first - 1] = _with_comment(lines[first - 1], text)
    return "".join(line for line in lines if line is not None)


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]


def _without_comment(line: str, col: int):
    """``line`` less its comment at ``col``; None when nothing else is on it."""
    code = line[:col].rstrip()
    return code + _ending(line) if code else None


def _with_comment(line: Optional[str], text: str) -> Optional[str]:
    if line is None:
        return None
    ending = _ending(line)
    return line[: len(line) - len(ending)].rstrip() + "  " + text + ending
