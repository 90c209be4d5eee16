"""A source text cut into its code, its strings and its comments, without a parse.

``pieces`` finds where each string and comment starts and ends in linear time and
memory, whatever the text: the bounds on what a file may ask of the parsers
(``codemod.run.limits``) and the data ``ast`` need not read
(``codemod.rewrite.standin``) are found with it. A run of comment lines is one
piece, found in one search: a file of comments costs no step per line.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

# What the scan stops at: a comment, or a string's quote (its prefix is looked
# for before it: a pattern that tries a prefix at every character is slow).
_STOP = re.compile(r"[#'\"]")
_PREFIX = frozenset("rRbBuUfFtT")
_WORD = re.compile(r"\w")
# What can end a string, from after its opening quote: a backslash escapes the next
# character; a one-quote string also ends (unclosed) at its line's end. Found one at
# a time: a pattern for the whole body (``(?:[^\\"]|\\.)*"``) keeps a backtracking
# entry per character, 1.4 GB for a 10 MB docstring.
_STRING_STOP = {
    "'''": re.compile(r"\\|'''"),
    '"""': re.compile(r'\\|"""'),
    "'": re.compile(r"\\|'|\n"),
    '"': re.compile(r'\\|"|\n'),
}
# The start of a line that holds code: not blank, not only a comment.
_CODE_LINE = re.compile(r"^[ \t\f\r]*[^ \t\f\r#\n]", re.MULTILINE)

CODE, STRING, FIELDS = "code", "string", "fields"  # FIELDS: an f- or t-string
COMMENTS = "comments"  # a comment and the comment and blank lines after it


def pieces(
    text: str, start: int = 0, end: Optional[int] = None
) -> Iterator[Tuple[int, int, str]]:
    """(start, end, kind) of the code, strings and f-strings of ``text``, in order,
    and of its runs of comments: a comment with the comment and blank lines after
    it, up to the next line of code, found in one search (a file of comments costs
    no step per line). ``start`` and ``end``: a part of ``text`` read as if it were
    all of it (``start`` in code)."""
    position, size = start, len(text) if end is None else end
    while position < size:
        found = _next(text, position, size)
        if found is None:
            yield position, size, CODE
            return
        at, prefix, quote = found
        if at > position:
            yield position, at, CODE
        if quote == "#":
            line_end = text.find("\n", at + 1, size)
            code = (
                _CODE_LINE.search(text, line_end + 1, size) if line_end >= 0 else None
            )
            position = size if code is None else code.start()
            yield at, position, COMMENTS
            continue
        body = at + len(prefix) + len(quote)
        position = _string_end(text, body, quote, size)
        kind = FIELDS if "f" in prefix.lower() or "t" in prefix.lower() else STRING
        yield at, position, kind


def _next(text: str, position: int, size: int) -> Optional[Tuple[int, str, str]]:
    """(start, prefix, quote) of the next comment (quote "#") or string from
    ``position``: a prefix is one or two of ``rbuft`` before the quote, with no
    word character before them."""
    found = _STOP.search(text, position, size)
    if found is None:
        return None
    at = found.start()
    char = text[at]
    if char == "#":
        return at, "", "#"
    quote = char * 3 if text.startswith(char * 3, at, size) else char
    for length in (2, 1):
        first = at - length
        if first < position or not all(c in _PREFIX for c in text[first:at]):
            continue
        if first == 0 or not _WORD.match(text, first - 1):
            return first, text[first:at], quote
    return at, "", quote


def _string_end(text: str, position: int, quote: str, size: int) -> int:
    """Where the string whose body starts at ``position`` ends: past its closing
    quote, at the end of its line for an unclosed one-quote string, else at
    ``size``."""
    stop = _STRING_STOP[quote]
    while True:
        found = stop.search(text, position, size)
        if found is None:
            return size
        if found.group() == "\\":
            position = found.end() + 1  # the escaped character, whatever it is
        elif found.group() == "\n":
            return found.start()
        else:
            return found.end()
