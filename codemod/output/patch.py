"""The bytes of a ``--diff``: the patch as it is, with its file names written as
git writes them.

A name that a terminal or a reader could take for something else (a byte that is
not UTF-8, a control character, a bidirectional control) is quoted C-style, as
``git diff`` quotes it (``--- "a/caf\\351.py"``): no raw byte reaches the
terminal, and ``git apply`` (and GNU patch) read the name back byte for byte.
Any other name stands as it is. The lines of code are the patch: never escaped.
"""

from __future__ import annotations

import os
import re

from codemod.output.findings import BIDI_CONTROLS

# What makes a name quoted: a byte of a name that is not UTF-8 (a lone
# surrogate), C0 and C1 controls, DEL, the line and paragraph separators, the
# bidirectional controls; and a leading double quote, which would read as one.
_NEEDS_QUOTES = re.compile(
    f'[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029\\ud800-\\udfff{BIDI_CONTROLS}]|^"'
)
_NAMED = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r"}


def git_quoted(name: str) -> str:
    """``name`` as git writes it in a patch: as it is, or C-style in quotes with
    every byte that is not printable ASCII written in octal."""
    if not _NEEDS_QUOTES.search(name):
        return name
    out = []
    for byte in os.fsencode(name):
        if byte in _NAMED:
            out.append(_NAMED[byte])
        elif byte in (0x22, 0x5C):  # " and \
            out.append("\\" + chr(byte))
        elif byte < 0x20 or byte >= 0x7F:
            out.append(f"\\{byte:03o}")
        else:
            out.append(chr(byte))
    return '"' + "".join(out) + '"'


def patch_bytes(diff: str, path: str) -> bytes:
    """The bytes of ``diff`` (the patch of the file ``path``), its ``---`` and
    ``+++`` lines naming ``path`` as git would."""
    head = diff.split("\n", 2)
    if len(head) == 3 and head[0].startswith("--- ") and head[1].startswith("+++ "):
        old, new = (path, path) if os.path.isabs(path) else (f"a/{path}", f"b/{path}")
        diff = f"--- {git_quoted(old)}\n+++ {git_quoted(new)}\n{head[2]}"
    return diff.encode("utf-8", "surrogateescape")
