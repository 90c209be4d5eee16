"""Text as torchport prints it: one record per line, nothing a terminal or a CI
runner would take for a command, nothing that reads differently than it is."""

from __future__ import annotations

import re

# C0 and C1 controls (ESC, VT, FF, CR, LF, CSI, ...), DEL, and the Unicode line and
# paragraph separators: each would move the cursor, rewrite the screen or start a
# new record for a line-based reader. The bidirectional controls (U+202A-U+202E,
# U+2066-U+2069, the marks U+200E, U+200F, U+061C) reorder what a terminal or a
# browser shows ("Trojan Source"). Lone surrogates are the bytes of a file name
# that is not UTF-8 (Python decodes byte 0x9B as U+DC9B): written raw, 0x9B is a
# terminal's CSI; a strict JSON parser rejects them.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_SURROGATES = "\ud800-\udfff"
_UNPRINTABLE = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}{_SURROGATES}]")
_LONE_SURROGATE = re.compile(f"[{_SURROGATES}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: "re.Match[str]") -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte of a name: that byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control character, bidirectional control and lone
    surrogate written as a visible escape (``\\x1b``, ``\\u202e``, ``\\x9b``)."""
    return _UNPRINTABLE.sub(_visible, text)


def without_surrogates(text: str) -> str:
    """``text`` with its lone surrogates written as visible escapes (an undecodable
    byte 0x9B of a file name as ``\\x9b``): what a JSON encoder may write, since
    ``json.dumps`` would emit ``"\\udc9b"``, which strict parsers reject."""
    return _LONE_SURROGATE.sub(_visible, text)


def one_line(error: BaseException) -> str:
    """An exception's message on one line (its type name when it has none)."""
    return " ".join(str(error).split()) or type(error).__name__


def printable_path(path: str) -> str:
    """``path`` made printable, to open a line: a relative path that starts with
    ``::`` (a GitHub Actions workflow command) is written ``./::...``, the same file.
    """
    shown = printable(path)
    return "./" + shown if shown.lstrip().startswith("::") else shown
