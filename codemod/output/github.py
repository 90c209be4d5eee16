"""The GitHub format: workflow commands that GitHub Actions shows as annotations."""

from __future__ import annotations

from typing import List

from codemod.model.text import printable
from codemod.output.findings import Findings, as_findings


def _escape_property(text: str) -> str:
    # GitHub workflow-command escaping (properties need ':' and ',' escaped too).
    return printable(
        text.replace("%", "%25")
        .replace("\r", "%0D")
        .replace("\n", "%0A")
        .replace(":", "%3A")
        .replace(",", "%2C")
    )


def _escape_data(text: str) -> str:
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def render_github(findings: Findings) -> str:
    """GitHub Actions workflow commands: one annotation per site and per problem.

    In a notebook the annotation names the file and the message names the cell.
    Sites that fail the check are warnings, informational ones notices.
    """
    findings = as_findings(findings)
    out: List[str] = []
    for d in findings.diagnostics:
        level = "notice" if d.severity == "info" and not findings.strict else "warning"
        place = f"line={d.line},col={d.col}"
        if d.cell is None and d.end_col is not None:
            place = f"line={d.line},endLine={d.end_line},col={d.col}"
            if d.span_lines == 0:
                place += f",endColumn={d.end_col}"
        text = f"{d.code} {d.message}"
        if d.cell is not None:
            place = "line=1"
            text = f"cell {d.cell}:{d.line}:{d.col}: {text}"
        out.append(
            f"::{level} title={_escape_property(f'torchport {d.code}')},"
            f"file={_escape_property(d.path)},{place}::{_escape_data(text)}\n"
        )
    for p in findings.problems:
        place = f",line={p.line}" if p.line else ""
        out.append(
            f"::error title={_escape_property(f'torchport {p.kind}')},"
            f"file={_escape_property(p.path)}{place}::{_escape_data(p.message)}\n"
        )
    return "".join(out)
