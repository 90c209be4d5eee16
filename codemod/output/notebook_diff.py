"""A notebook's change as a reader wants it: one diff of Python per changed code
cell (``a/nb.ipynb:cell 3``), instead of the diff of the escaped JSON that
``--diff`` prints for ``git apply``.

Built from what a run returns: the file as it was and either the file as it is
(after a rewrite) or the JSON diff (a preview), which is applied to the old text.
"""

from __future__ import annotations

import re
from typing import List, Optional

from codemod.model.lines import split_lines
from codemod.output.noqa import cell_sources
from codemod.rewrite.linediff import unified_diff

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_diff(old: str, diff: str) -> Optional[str]:
    """``old`` with the unified ``diff`` of it applied; None when it does not
    apply."""
    lines = split_lines(old)
    out: List[str] = []
    at = 0  # lines of ``old`` copied or consumed
    body = diff.splitlines(keepends=True)
    i = 0
    while i < len(body):
        match = _HUNK.match(body[i])
        i += 1
        if not match:
            continue
        start = int(match.group(1)) - (0 if match.group(2) == "0" else 1)
        if start < at:
            return None
        out += lines[at:start]
        at = start
        while i < len(body) and not body[i].startswith("@@"):
            line = body[i]
            i += 1
            if line.startswith("\\"):
                if out:
                    out[-1] = out[-1].rstrip("\n")
                continue
            kind, text = line[:1], line[1:]
            if kind in (" ", "-"):
                if at >= len(lines) or lines[at].rstrip("\r\n") != text.rstrip("\r\n"):
                    return None
                if kind == " ":
                    out.append(lines[at])
                at += 1
            elif kind == "+":
                out.append(text)
    out += lines[at:]
    return "".join(out)


def cell_diffs(path: str, old: str, new: str) -> str:
    """One unified diff per code cell whose source changed from ``old`` to
    ``new`` (the notebook's JSON texts)."""
    before, after = cell_sources(old), cell_sources(new)
    out = []
    for number in sorted(after):
        if number in before and before[number] != after[number]:
            out.append(
                unified_diff(f"{path}:cell {number}", before[number], after[number])
            )
    return "".join(out)
