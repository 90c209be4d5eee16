"""Text as torchport prints it: one record per line, nothing a terminal or a CI
runner would take for a command."""

from __future__ import annotations

import re

# C0 and C1 controls (ESC, VT, FF, CR, LF, ...), DEL, and the Unicode line and
# paragraph separators: each would move the cursor, rewrite the screen or start a
# new record for a line-based reader.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: "re.Match[str]") -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control character written as a visible escape."""
    return _UNPRINTABLE.sub(_visible, text)


def one_line(error: BaseException) -> str:
    """An exception's message on one line (its type name when it has none)."""
    return " ".join(str(error).split()) or type(error).__name__


def printable_path(path: str) -> str:
    """``path`` made printable, to open a line: a relative path that starts with
    ``::`` (a GitHub Actions workflow command) is written ``./::...``, the same file.
    """
    shown = printable(path)
    return "./" + shown if shown.lstrip().startswith("::") else shown
