"""The pylint format (as Ruff writes it): ``path:line: [CODE] message``, one line
per site and per file that could not be processed, for editors and tools that
read pylint's parseable output."""

from __future__ import annotations

from codemod.model.text import printable, printable_path
from codemod.output.findings import Findings, as_findings


def render_pylint(findings: Findings) -> str:
    findings = as_findings(findings)
    out = []
    for d in findings.diagnostics:
        info = " (info)" if d.severity == "info" else ""
        out.append(
            f"{printable_path(d.where)}:{d.line}: [{d.code}]{info}"
            f" {printable(d.message)}\n"
        )
    for p in findings.problems:
        out.append(
            f"{printable_path(p.path)}:{p.line or 1}: [{p.kind}] {printable(p.message)}\n"
        )
    return "".join(out)
