"""What ``ast`` reads of a file: the file, with its bulky data set aside.

A statement that holds no site is never rewritten, yet ``ast`` makes a node for
every item of a literal in it and each walk of the module's tree visits them all:
a 10 MB ``DATA = [1, 1, ...]`` beside one ``.cuda()`` took 4.6 GB and 40 s. So the
content of a bracket that is data only (numbers, ``True``, ``False``, ``None``,
signs, dots, commas, nested brackets of them, comments: no name, no string, no
trigger) and at least ``BULK`` characters long is read as one ``0`` among blanks.
Every line and column outside it stays where it is, so the tree's positions are
the file's, and every other part of the rewrite reads the file itself.

Set-aside data is checked to be Python first: ``ast`` parses it ``CHUNK``
characters at a time, each piece cut just after a comma and closed with the
brackets open there, so that a file with an error in its data is refused as
before, in bounded memory. A file with a ``case`` clause keeps all its data (a
pattern is not an expression).
"""

from __future__ import annotations

import ast
import re
from typing import Iterable, List, Set, Tuple

from codemod import catalog
from codemod.model.pieces import CODE, COMMENTS, pieces

BULK = 4096  # the least data set aside, in characters
CHUNK = 65536  # the most data ``ast`` reads at once to check it

_BRACKET = re.compile(r"[()\[\]{}]")
_CLOSING = {"(": ")", "[": "]", "{": "}"}
# In code, what data is not: a name (but a number's letters, True, False and
# None), any other punctuation, a character outside ASCII.
_NOT_DATA = re.compile(
    r"(?<![\w.])(?!(?:True|False|None)\b)[A-Za-z_]\w*|[^\s\w,.+\-()\[\]{}]|[^\x00-\x7f]"
)
_TRIGGER = re.compile("|".join(catalog.triggers()))
# A piece of flat data as Python's grammar writes numbers: its items, each one
# followed by a comma (but the last), read without ``ast``.
_DIGITS = r"[0-9](?:_?[0-9])*"
_INTEGER = (
    r"(?:[1-9](?:_?[0-9])*|0+(?:_?0)*|0[bB](?:_?[01])+|0[oO](?:_?[0-7])+"
    r"|0[xX](?:_?[0-9a-fA-F])+)"
)
_POINT = rf"(?:(?:{_DIGITS})?\.{_DIGITS}|{_DIGITS}\.)"
_FLOAT = rf"(?:{_POINT}(?:[eE][+-]?{_DIGITS})?|{_DIGITS}[eE][+-]?{_DIGITS})"
_NUMBER = rf"(?:(?:{_FLOAT}|{_DIGITS})[jJ]|{_FLOAT}|{_INTEGER})"
_BLANK = r"[ \t\f\n]*"
_ITEM = rf"(?:[+-]{_BLANK})*(?:{_NUMBER}|True|False|None)"
_FLAT = re.compile(rf"(?:{_BLANK}{_ITEM}{_BLANK},)*{_BLANK}(?:{_ITEM}{_BLANK})?")
_CASE = re.compile(r"^[ \t]*case\b", re.MULTILINE)
_NOT_LINE_END = re.compile(r"[^\r\n]")


def read(source: str, checked: Iterable[str] = ()) -> Tuple[str, Set[str]]:
    """What ``ast`` reads of ``source``, and the data set aside; ``checked``: data
    already known to be data and to parse (the input's, found again in the output)."""
    known = set(checked)
    found = regions(source, known)
    if not found:
        return source, set()
    parts: List[str] = []
    aside: Set[str] = set()
    done = 0
    for start, end in found:
        data = source[start:end]
        code = _without_comments(source, start, end)
        first = len(code) - len(code.lstrip())
        if first == len(code):
            continue  # no item: nothing to gain
        if data not in known and not _parses(code, source[start - 1]):
            continue  # ast reads it as written, and says what is wrong with it
        blank = _NOT_LINE_END.sub(" ", data)
        parts += [source[done : start + first], "0", blank[first + 1 :]]
        aside.add(data)
        done = end
    if not aside:
        return source, set()
    parts.append(source[done:])
    return "".join(parts), aside


def regions(text: str, known: Set[str] = frozenset()) -> List[Tuple[int, int]]:
    """(start, end) of the content of each outermost bracket that is data only and
    at least ``BULK`` characters long, in order (``known``: such contents)."""
    if len(text) < BULK or _CASE.search(text):
        return []
    candidates = []  # brackets holding at least BULK characters, by opening
    stack: List[int] = []
    for start, end, kind in pieces(text):
        if kind != CODE:
            continue
        for bracket in _BRACKET.finditer(text, start, end):
            if bracket.group() in _CLOSING:
                stack.append(bracket.start())
            elif stack:
                opened = stack.pop()
                closing = _CLOSING[text[opened]] == bracket.group()
                if closing and bracket.start() - opened > BULK:
                    candidates.append((opened + 1, bracket.start()))
    found: List[Tuple[int, int]] = []
    for start, end in sorted(candidates):
        if found and start < found[-1][1]:
            continue  # inside data already set aside
        if (known and text[start:end] in known) or _data_only(text, start, end):
            found.append((start, end))
    return found


def _data_only(text: str, start: int, end: int) -> bool:
    if _TRIGGER.search(text, start, end):
        return False
    for piece_start, piece_end, kind in pieces(text, start, end):
        if kind == COMMENTS:
            continue
        if kind != CODE or _NOT_DATA.search(text, piece_start, piece_end):
            return False
    return True


def _without_comments(text: str, start: int, end: int) -> str:
    """The data from ``start`` to ``end``, its comments blanked."""
    parts = []
    for piece_start, piece_end, kind in pieces(text, start, end):
        part = text[piece_start:piece_end]
        parts.append(_NOT_LINE_END.sub(" ", part) if kind == COMMENTS else part)
    return "".join(parts)


def _parses(code: str, opener: str) -> bool:
    """Whether ``code`` (comments blanked) is Python as the content of ``opener``:
    parsed ``CHUNK`` characters at a time, each piece cut after a comma and given
    the brackets open where it starts and ends."""
    stack = [opener]
    position = 0
    while position < len(code):
        cut = len(code)
        if cut - position > CHUNK:
            cut = code.find(",", position + CHUNK) + 1 or len(code)
        head = "".join(stack)
        for bracket in _BRACKET.finditer(code, position, cut):
            char = bracket.group()
            if char in _CLOSING:
                stack.append(char)
            elif not stack or _CLOSING[stack.pop()] != char:
                return False
        if not stack:
            return False  # the outer bracket closed inside its own content
        if len(head) == len(stack) == 1 and _FLAT.fullmatch(code, position, cut):
            position = cut  # no bracket in it: numbers and commas, as Python has them
            continue
        tail = "".join(_CLOSING[char] for char in reversed(stack))
        try:
            ast.parse(head + code[position:cut] + tail, mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        position = cut
    return stack == [opener]


def view(text: str, aside: Set[str]) -> str:
    """What ``ast`` reads of a rewritten file whose input had data ``aside``: the
    same data, found again, is set aside unchecked; ``text`` when none was."""
    return read(text, aside)[0] if aside else text
