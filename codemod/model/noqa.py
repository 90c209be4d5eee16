"""``# noqa`` comments: which lines suppress which rule codes.

Kept free of libcst: only real comments count, found with ``tokenize``.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Dict, FrozenSet, Iterator, Optional, Tuple

from codemod.model.lines import split_lines

_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE
)


def noqa_lines(source: str) -> Dict[int, Optional[FrozenSet[str]]]:
    """Line -> suppressed codes (None: every code) for each ``# noqa`` comment.

    Only real comments count (found with tokenize): ``"# noqa"`` inside a string
    suppresses nothing.
    """
    found: Dict[int, Optional[FrozenSet[str]]] = {}
    if "noqa" not in source.lower():
        return found
    for line, comment in _comments(source):
        match = _NOQA.search(comment)
        if match:
            codes = match.group("codes")
            found[line] = (
                frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c)
                if codes
                else None
            )
    return found


def _comments(source: str) -> Iterator[Tuple[int, str]]:
    """(line, text) of every comment token in ``source``."""
    readline = io.StringIO(source).readline
    last = 0
    try:
        for token in tokenize.generate_tokens(readline):
            last = token.start[0]
            if token.type == tokenize.COMMENT:
                yield token.start[0], token.string
    except (tokenize.TokenError, SyntaxError):
        # libcst accepted the file but this Python's tokenize did not (newer
        # syntax): read the rest line by line.
        for number, line in enumerate(
            split_lines(source, False)[last:], start=last + 1
        ):
            if "#" in line:
                yield number, line[line.index("#") :]
