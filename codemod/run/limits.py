"""The bounds on what one file may ask of the parsers, checked before they run.

- **Nesting**: brackets nested deeper than ``MAX_BRACKET_DEPTH`` (CPython's own
  limit: it says "too many nested parentheses") are refused before ``ast`` or
  libcst see the file. libcst's native parser recurses once per bracket and
  overflows its stack at about 1,300 (a segmentation fault, not an exception);
  ``ast`` fails on such code too, so no program that runs is refused.
- **Statement size**: a logical line (a statement, or a compound statement's
  header, with the lines its brackets join) that can hold a site and is longer
  than ``MAX_STATEMENT_CHARS`` is refused: libcst and the passes need about 1.3 MB
  of memory and 40 ms per kilobyte of one statement (``scripts/long_lines.py``),
  so a 10 MB statement would take 13 GB and seven minutes.

Both are found by one scan of the text that skips strings and comments, in linear
time and without building a tree (``ast`` would take 1.5 GB to read a 10 MB
statement). Both are one line (``path: cannot parse: ...`` / ``path: cannot
rewrite: ...``); the file is left as it was and the other files are processed.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Iterator, Optional, Tuple

from codemod.model.pieces import CODE, COMMENTS, STRING
from codemod.model.pieces import pieces as _pieces
from codemod.run.prefilter import PREFILTER

MAX_BRACKET_DEPTH = 200  # CPython's MAXLEVEL
MAX_STATEMENT_CHARS = 100_000

# Everything but a bracket (non-ASCII text in code or a field included).
_NOT_BRACKET = re.compile(r"[^()\[\]{}]+")
_STEP = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
# In code: a bracket, a line continuation, or the end of a line.
_BREAK = re.compile(r"[()\[\]{}]|\\\r?\n|\n")


def nesting_problem(text: str) -> Optional[str]:
    """Why ``text`` must not be parsed for how deep its brackets nest, if it must
    not: "brackets nested more than 200 deep on line N ..."."""
    openers = text.count("(") + text.count("[") + text.count("{")
    if openers <= MAX_BRACKET_DEPTH:
        return None
    depth = 0
    for start, end, kind in _pieces(text):
        if kind in (STRING, COMMENTS):
            continue
        after, deepest, at = _through(text[start:end], depth)
        if deepest > MAX_BRACKET_DEPTH:
            line = text.count("\n", 0, start + at) + 1
            return (
                f"brackets nested more than {MAX_BRACKET_DEPTH} deep on line {line}"
                " (Python's limit); not parsed"
            )
        if kind == CODE:  # an f-string's fields are closed inside it
            depth = after
    return None


def _through(code: str, depth: int):
    """The bracket depth after ``code`` from ``depth``, the deepest reached, and
    roughly where (an offset in ``code``)."""
    kept = _NOT_BRACKET.sub("", code)
    if not kept:
        return depth, depth, 0
    levels = list(accumulate(map(_STEP.__getitem__, kept), initial=depth))
    deepest = max(levels)
    if deepest <= MAX_BRACKET_DEPTH:
        return levels[-1], deepest, 0
    # where: the offset of the bracket that went past the limit
    count = levels.index(deepest)
    at, seen = 0, 0
    for at, char in enumerate(code):
        if char in _STEP:
            seen += 1
            if seen == count:
                break
    return levels[-1], deepest, at


def statement_problem(text: str) -> Optional[str]:
    """Why ``text`` must not be rewritten for the size of one of its logical lines
    whose text can hold a site (``prefilter``), if it must not. Every text is
    scanned, whatever its size: the work stays proportional to it."""
    for start, end in _long_logical_lines(text):
        statement = text[start:end]
        if not PREFILTER.matches(statement.encode("utf-8", "surrogatepass")):
            continue
        first = text.count("\n", 0, start) + 1
        last = first + statement.rstrip("\n").count("\n")
        span = f"line {first}" if first == last else f"lines {first}-{last}"
        return (
            f"the statement on {span} is {end - start:,} characters; torchport"
            f" rewrites statements of up to {MAX_STATEMENT_CHARS:,}; file left"
            " untouched"
        )
    return None


def _long_logical_lines(text: str) -> Iterator[Tuple[int, int]]:
    """(start, end) of each logical line of ``text`` longer than the bound: lines
    end at a newline outside brackets, strings and comments, not after a ``\\``."""
    start, depth = 0, 0
    for piece_start, piece_end, kind in _pieces(text):
        if kind == COMMENTS and depth == 0:  # each of its lines is a logical line
            first = text.find("\n", piece_start, piece_end) + 1
            if first:  # the line the run starts on may start before it
                if first - start > MAX_STATEMENT_CHARS:
                    yield start, first
                start = text.rfind("\n", piece_start, piece_end) + 1
                yield from _long_lines(text, first, start)
            continue
        if kind != CODE:
            continue
        for found in _BREAK.finditer(text, piece_start, piece_end):
            char = found.group()
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth = max(depth - 1, 0)
            elif char == "\n" and depth == 0:
                if found.end() - start > MAX_STATEMENT_CHARS:
                    yield start, found.end()
                start = found.end()
    if len(text) - start > MAX_STATEMENT_CHARS:
        yield start, len(text)


def _long_lines(text: str, start: int, end: int) -> Iterator[Tuple[int, int]]:
    """(start, end) of each line from ``start`` up to ``end`` (just past a line's
    end) longer than the bound, found a window of the bound's size at a time."""
    while start < end:
        window = text.rfind("\n", start, min(start + MAX_STATEMENT_CHARS, end))
        if window < 0:  # no line ends in the window: its first line is long
            line_end = text.find("\n", start, end) + 1
            yield start, line_end
            start = line_end
        else:  # every line that ends in the window is short
            start = window + 1
