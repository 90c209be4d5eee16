"""The text format: one line per site (``path:line:col: CODE [*] message``), and
the ``--show-fixes`` block of the sites rewritten in each file."""

from __future__ import annotations

from typing import List

from codemod.model.text import printable, printable_path
from codemod.output.findings import Findings, as_findings

STYLES = {"path": "bold", "code": "red", "info": "cyan", "fix": "cyan"}


def render_text(findings: Findings, color: bool = False, sources=None) -> str:
    """``path:line:col: CODE [*] message``; ``[*]`` marks a site torchport rewrites
    (or would) with the options given, ``(info)`` one that runs everywhere as it is.
    Problems go to standard error (``render_problems``)."""
    findings = as_findings(findings)
    style = styler(color)
    return "".join(headline(d, style) + "\n" for d in findings.diagnostics)


def headline(d, style) -> str:
    """``path:line:col: CODE [*] message``, styled by ``style(text, key)``."""
    marker = " " + style("[*]", "fix") if d.applied else ""
    info = " " + style("(info)", "info") if d.severity == "info" else ""
    code = style(d.code, "info" if d.severity == "info" else "code")
    return (
        f"{style(printable_path(d.where), 'path')}:{d.line}:{d.col}: {code}{marker}"
        f"{info} {printable(d.message)}"
    )


def styler(color: bool):
    """``style(text, key)`` for the keys of ``STYLES``; plain text without colour."""
    import click

    def style(text: str, key: str) -> str:
        if not color:
            return text
        if STYLES[key] == "bold":
            return click.style(text, bold=True)
        return click.style(text, fg=STYLES[key])

    return style


def render_fixes(results, heading: str = "Fixed in") -> str:
    """The sites rewritten in each file (``--show-fixes``); ``results`` are FileResults."""
    out: List[str] = []
    for result in results:
        fixed = [d for d in result.diagnostics if d.applied]
        if not fixed or not result.changed:
            continue
        out.append(f"{heading} {printable(result.path)}:\n")
        for d in fixed:
            cell = f"cell {d.cell}:" if d.cell is not None else ""
            out.append(f"  {cell}{d.line}:{d.col}: {d.code} {printable(d.message)}\n")
    return "".join(out)
