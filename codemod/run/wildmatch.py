"""Gitignore patterns matched in time linear in the path, whatever the pattern.

A glob translated to a backtracking regular expression (``*a*a*a*ab`` becomes
``[^/]*a[^/]*a...``) takes time exponential in the number of stars on a name that
almost matches; a name of 40 ``a`` never finishes. Here a pattern is cut at its
stars into pieces of fixed width (characters, ``?``, ``[...]``), and the pieces
are placed left to right, each at the first place it fits: with only ``*``
between them that placement is the best one, so nothing is ever tried twice.
The same holds a level up: a pattern's path components are cut at ``**`` into
runs of components, each placed at the first run of path components it fits.
Each piece is a regular expression without a quantifier, so ``re`` never
backtracks in one either.

The syntax is git's (``gitignore(5)``, ``wildmatch``): ``*`` and ``?`` never
match ``/``; ``[...]`` with ranges, ``!``/``^`` negation and ``[:alpha:]``
classes; ``\\`` escapes; ``**/`` leading, ``/**/`` inside, ``/**`` trailing; a
pattern with no ``/`` but a trailing one matches a name at any depth; a trailing
``/`` matches folders only; ``!`` negates. A class that is never closed, or names
an unknown ``[:class:]``, matches nothing, as in git.
"""

from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple

_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}
_STAR = object()  # a run of any characters but "/"
_ANY_FOLDERS = object()  # "**" as a whole component: any run of components


class _Unmatchable(Exception):
    """A pattern git's wildmatch gives up on: it matches nothing."""


class Component:
    """The glob of one path component, matched in linear time (see the module)."""

    def __init__(self, text: str) -> None:
        pieces: List[List[str]] = [[]]  # regex atoms of the fixed-width pieces
        for token in _tokens(text):
            if token is _STAR:
                pieces.append([])
            else:
                pieces[-1].append(token)
        self.starred = len(pieces) > 1
        self.widths = [len(piece) for piece in pieces]
        self.pieces = [re.compile("".join(piece), re.DOTALL) for piece in pieces]

    def matches(self, name: str) -> bool:
        pieces, widths = self.pieces, self.widths
        if not self.starred:
            return len(name) == widths[0] and pieces[0].match(name) is not None
        end = len(name) - widths[-1]
        if end < widths[0] or pieces[0].match(name) is None:
            return False
        if pieces[-1].match(name, end) is None:
            return False
        position = widths[0]
        for piece, width in zip(pieces[1:-1], widths[1:-1]):
            found = piece.search(name, position, end)
            if found is None:
                return False
            position = found.end()
        return True


def _tokens(text: str):
    """The regex atom of each character, ``?`` and class of ``text`` (one width
    each), and ``_STAR`` for each run of stars."""
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char == "*":
            while index < size and text[index] == "*":
                index += 1
            yield _STAR
            continue
        if char == "?":
            yield "."
        elif char == "[":
            atom, index = _class(text, index + 1)
            yield atom
            continue
        elif char == "\\" and index + 1 < size:
            index += 1
            yield re.escape(text[index])
        else:
            yield re.escape(char)
        index += 1


def _class(text: str, index: int) -> Tuple[str, int]:
    """The regex of the class that starts at ``index`` (after its ``[``), and the
    index after its ``]``."""
    negated = index < len(text) and text[index] in "!^"
    index += negated
    items: List[str] = []
    first = True
    while True:
        if index >= len(text):
            raise _Unmatchable
        char = text[index]
        if char == "]" and not first:
            break
        first = False
        if char == "[" and text.startswith("[:", index):
            close = text.find(":]", index + 2)
            if close < 0:
                raise _Unmatchable
            name = text[index + 2 : close]
            if name not in _POSIX_CLASSES:
                raise _Unmatchable
            items.append(_POSIX_CLASSES[name])
            index = close + 2
            continue
        if char == "\\" and index + 1 < len(text):
            index += 1
            char = text[index]
        index += 1
        if (
            text.startswith("-", index)
            and index + 1 < len(text)
            and text[index + 1] != "]"
        ):
            high, index = text[index + 1], index + 2
            if high == "\\" and index < len(text):
                high, index = text[index], index + 1
            # wildmatch compares a range's first character on its own first
            items.append(
                f"{re.escape(char)}-{re.escape(high)}"
                if char <= high
                else re.escape(char)
            )
            continue
        items.append(re.escape(char))
    return f"[{'^' if negated else ''}{''.join(items)}]", index + 1


class Pattern:
    """One line of a gitignore file (or one ``exclude`` glob)."""

    def __init__(self, line: str) -> None:
        self.negated = line.startswith("!")
        body = line[1:] if self.negated else line
        self.folders_only = body.endswith("/")
        body = body.rstrip("/")
        self.anchored = "/" in body
        body = body.lstrip("/")
        self.unmatchable = False
        self.parts: List[object] = []
        try:
            for part in body.split("/"):
                if part == "**" and self.anchored:
                    if not self.parts or self.parts[-1] is not _ANY_FOLDERS:
                        self.parts.append(_ANY_FOLDERS)
                else:
                    self.parts.append(Component(part))
        except _Unmatchable:
            self.unmatchable = True
        # "a/**" matches what is inside a, not a itself: one component more at least
        if self.parts and self.parts[-1] is _ANY_FOLDERS:
            self.parts[-1:] = [Component("*"), _ANY_FOLDERS]

    def matches(self, parts: Sequence[str], is_dir: bool) -> bool:
        """Whether the path of ``parts`` (its components, relative to the folder
        of the pattern) is matched."""
        if self.unmatchable or (self.folders_only and not is_dir) or not parts:
            return False
        if not self.anchored:
            return self.parts[0].matches(parts[-1])
        return _runs_fit(self.parts, parts)


def _runs_fit(pattern: Sequence[object], parts: Sequence[str]) -> bool:
    """Whether the components ``pattern`` (``_ANY_FOLDERS`` among them) match
    ``parts``: each run between two ``**`` placed at the first place it fits."""
    runs: List[List[Component]] = [[]]
    for item in pattern:
        if item is _ANY_FOLDERS:
            runs.append([])
        else:
            runs[-1].append(item)
    if len(runs) == 1:
        return len(parts) == len(runs[0]) and _fits(runs[0], parts, 0)
    first, last = runs[0], runs[-1]
    end = len(parts) - len(last)
    if end < len(first) or not _fits(first, parts, 0) or not _fits(last, parts, end):
        return False
    position = len(first)
    for run in runs[1:-1]:
        start = next(
            (at for at in range(position, end - len(run) + 1) if _fits(run, parts, at)),
            None,
        )
        if start is None:
            return False
        position = start + len(run)
    return True


def _fits(run: Sequence[Component], parts: Sequence[str], at: int) -> bool:
    return all(glob.matches(parts[at + i]) for i, glob in enumerate(run))


def parse_lines(lines: Sequence[str]) -> List[Pattern]:
    """The patterns of gitignore lines: blank lines and ``#`` comments skipped,
    unescaped trailing spaces dropped, ``\\#`` and ``\\!`` taken literally."""
    patterns = []
    for index, line in enumerate(lines):
        if index == 0:
            line = line.lstrip("\ufeff")
        line = _without_trailing_spaces(line)
        if line and not line.startswith("#"):  # "\\#" and "\\!" are escapes
            patterns.append(Pattern(line))
    return patterns


def _without_trailing_spaces(line: str) -> str:
    stripped = line.rstrip(" ")
    if stripped != line and stripped.endswith("\\"):
        # "\ " keeps the space it escapes (an odd run of backslashes escapes it)
        slashes = len(stripped) - len(stripped.rstrip("\\"))
        if slashes % 2:
            return stripped + " "
    return stripped


def verdict(patterns: Sequence[Pattern], parts: Sequence[str], is_dir: bool):
    """True (ignored) or False (re-included) by the last pattern that matches the
    path of ``parts``; None when none does."""
    for pattern in reversed(patterns):
        if pattern.matches(parts, is_dir):
            return not pattern.negated
    return None


def path_verdict(
    patterns: Sequence[Pattern], relative: str, is_dir: bool
) -> Optional[bool]:
    """The verdict on ``relative`` (POSIX, relative to the patterns' folder) as git
    gives it: a folder on the way that is ignored ignores everything inside it."""
    parts = [part for part in relative.split("/") if part]
    for depth in range(1, len(parts)):
        if verdict(patterns, parts[:depth], True):
            return True
    return verdict(patterns, parts, is_dir)
