"""Single quotes for a project whose ``ruff format`` prefers them
(``quote-style = "single"``): black writes double quotes only, so the strings of
the lines torchport changed are requoted as Ruff would quote them.

As Ruff does: a string whose body holds a single quote keeps its double quotes
(requoting would add an escape), and triple-quoted strings and docstrings keep
theirs (Ruff keeps double quotes there, after PEP 8 and PEP 257). Only the given
lines are touched; every other byte stays.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import replace
from typing import List, Tuple

# prefix, then a one-line double-quoted body with no quote of either kind and no
# backslash (an escape would read otherwise between other quotes).
_DOUBLE = re.compile(r'(?P<prefix>[rRbBuUfF]{0,2})"(?P<body>[^"\'\\\n]*)"\Z')


def single_quoted(text: str, lines: List[Tuple[int, int]]) -> str:
    """``text`` with the double-quoted strings on ``lines`` (1-based inclusive
    ranges) written with single quotes; ``text`` itself when it does not
    tokenize."""
    wanted = set()
    for first, last in lines:
        wanted.update(range(first, last + 1))
    if not wanted:
        return text
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return text
    edits = []  # (line, column, old, new), right to left within a line
    for token in tokens:
        if token.type != tokenize.STRING or token.start[0] not in wanted:
            continue
        if token.start[0] != token.end[0]:
            continue
        match = _DOUBLE.match(token.string)
        if match is None:
            continue
        new = f"{match.group('prefix')}'{match.group('body')}'"
        edits.append((token.start[0], token.start[1], token.string, new))
    if not edits:
        return text
    rows = text.splitlines(keepends=True)
    for row, column, old, new in sorted(edits, reverse=True):
        line = rows[row - 1]
        if line[column : column + len(old)] == old:
            rows[row - 1] = line[:column] + new + line[column + len(old) :]
    return "".join(rows)


def requoted(rewrite, layout):
    """``rewrite`` (a pipeline ``Rewrite``) with the lines it changed requoted
    when ``layout`` asks for single quotes (Ruff's quote-style = "single"); the
    same length, so every diagnostic's position stays."""
    if not getattr(layout, "single_quotes", False) or rewrite.code == rewrite.source:
        return rewrite
    from codemod.rewrite.formatting import changed_lines

    lines = changed_lines(rewrite.source, rewrite.code)
    return replace(rewrite, code=single_quoted(rewrite.code, lines))
