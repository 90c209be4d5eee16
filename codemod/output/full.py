"""The full format (Ruff's default): each site's line, then the code around it
with a caret under the site, then what to do about it.

```
train.py:3:5: TP201 [*] `.cuda()` moves to CUDA only; use `.to(_DEVICE())`
  |
1 | import torch
2 |
3 | x = torch.ones(2).cuda()
  |     ^^^^^^^^^^^^^^^^^^^^ TP201
4 | print(x)
  |
  = help: `torchport fix` rewrites it

  Safe fix:
  3 - x = torch.ones(2).cuda()
    + x = torch.ones(2).to(_DEVICE())
```

The fix is shown under ``check`` (``fix`` has made it; ``--show-fixes`` lists
it).

The code is read from the file as it is when the output is written (after a
rewrite, with ``fix``), or from the text given (standard input); in a notebook,
from the site's cell.
"""

from __future__ import annotations

from typing import Dict, List, Optional

from codemod.model.text import printable
from codemod.output.findings import Findings, as_findings
from codemod.output.text import headline, styler
from codemod.run.job import WRITE

CONTEXT_LINES = 2


def render_full(findings: Findings, color: bool = False, sources=None) -> str:
    findings = as_findings(findings)
    style = styler(color)
    texts: Dict[str, Optional[str]] = dict(sources or {})
    split: Dict = {}
    out: List[str] = []
    for d in findings.diagnostics:
        out.append(headline(d, style) + "\n")
        lines = _lines(d, texts, split)
        if lines:
            out.append(_snippet(d, lines, style))
        out.append(f"  = help: {_help(d, findings.mode)}\n")
        out.append(_fix(findings.edits_for(d), d, lines, style) + "\n")
    return "".join(out)


def _fix(edits, d, lines: List[str], style) -> str:
    """The change ``torchport fix`` makes for the site (under ``check``): the lines
    it removes (numbered as they are now) and those it adds; an insertion is shown
    above the line it goes before."""
    if not edits:
        return ""
    width = len(str(max(e.end for e in edits) + 1))
    out = [f"\n  {d.fix.capitalize()} fix:\n"]

    def row(number, mark: str, text: str, key) -> None:
        shown = f"  {number:>{width}} {mark} {printable(text.expandtabs(4))}".rstrip()
        out.append((style(shown, key) if key else shown) + "\n")

    for edit in edits:
        for offset, line in enumerate(edit.removed.splitlines()):
            row(edit.start + offset, "-", line, "code")
        for line in edit.content.splitlines():
            row("", "+", line, "fix")
        if not edit.removed and 1 <= edit.start <= len(lines):
            row(edit.start, " ", lines[edit.start - 1], None)
    return "".join(out)


def _lines(d, texts: Dict[str, Optional[str]], split: Dict) -> List[str]:
    """The lines of the site's file (or cell), split once per file and cell."""
    key = (d.path, d.cell)
    if key not in split:
        if d.path not in texts:
            texts[d.path] = _read(d.path)
        text = texts[d.path] or ""
        if d.cell is not None:
            from codemod.output.noqa import cell_sources

            cells = split.setdefault((d.path, "cells"), cell_sources(text))
            text = cells.get(d.cell, "")
        split[key] = text.splitlines()
    return split[key]


def _read(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8-sig", errors="replace")
    except OSError:
        return None


def _snippet(d, lines: List[str], style) -> str:
    if not 1 <= d.line <= len(lines):
        return ""
    first = max(1, d.line - CONTEXT_LINES)
    last = min(len(lines), d.end_line + CONTEXT_LINES)
    width = len(str(last))
    gutter = " " * width
    out = [f"{gutter} |\n"]
    for number in range(first, last + 1):
        text = printable(lines[number - 1].expandtabs(4))
        out.append(f"{number:>{width}} | {text}".rstrip() + "\n")
        if number == d.line:
            start = d.col - 1
            if d.span_lines == 0 and d.end_col is not None:
                end = max(d.end_col - 1, start + 1)
            else:
                end = max(len(lines[number - 1].rstrip()), start + 1)
            carets = style("^" * (end - start), "code")
            out.append(f"{gutter} | {' ' * start}{carets} {style(d.code, 'code')}\n")
    out.append(f"{gutter} |\n")
    return "".join(out)


def _help(d, mode: str) -> str:
    if d.code == "TP000":
        return "remove the code from the comment (or the comment)"
    if d.applied:
        return "rewritten" if mode == WRITE else "`torchport fix` rewrites it"
    if d.unsafe_available:
        return "`torchport fix --unsafe-fixes` rewrites it (review the change)"
    if d.severity == "info":
        return f"runs everywhere as it is; see `torchport rule {d.code}`"
    return f"port it by hand, or keep it with `# noqa: {d.code}`; see `torchport rule {d.code}`"
