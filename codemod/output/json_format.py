"""The JSON format: one record per diagnostic, shaped like Ruff's (with each fix's
edits), then one per problem. A file name that is not valid UTF-8 is written with
its bytes escaped (``\\xff``): JSON can hold no lone surrogate."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from codemod.output.findings import Findings, as_findings, exact_name, visible
from codemod.run.job import WRITE

if TYPE_CHECKING:
    from codemod.model.diagnostic import Diagnostic


def _location(row: Optional[int], column: Optional[int]) -> Optional[dict]:
    return None if row is None else {"row": row, "column": column}


def json_records(findings: Findings) -> List[dict]:
    """One record per diagnostic (shaped like Ruff's JSON), then one per problem."""
    findings = as_findings(findings)
    records = []
    for d in findings.diagnostics:
        fix = None
        if d.fix != "none":
            fix = {
                "applicability": d.fix,
                "applied": d.applied and findings.mode == WRITE,
                "message": _fix_message(d, findings.mode),
                "edits": [
                    {
                        "content": e.content,
                        "location": {"row": e.start, "column": 1},
                        "end_location": {"row": e.end, "column": 1},
                    }
                    for e in findings.edits_for(d)
                ],
            }
        records.append(
            {
                "type": "diagnostic",
                "filename": exact_name(d.path),
                "cell": d.cell,
                "code": d.code,
                "name": d.name,
                "message": visible(d.message),
                "severity": d.severity,
                "state": findings.state(d),
                "location": _location(d.line, d.col),
                "end_location": _location(d.end_line, d.end_col or d.col),
                "noqa_row": d.line,
                "fix": fix,
            }
        )
    for p in findings.problems:
        records.append(
            {
                "type": "error",
                "filename": exact_name(p.path),
                "cell": None,
                "code": None,
                "name": p.kind,
                "message": visible(p.message),
                "severity": "error",
                "state": "error",
                "location": _location(p.line, 1),
                "end_location": _location(p.line, 1),
                "noqa_row": None,
                "fix": None,
            }
        )
    return records


def _fix_message(d: Diagnostic, mode: str) -> str:
    if d.applied:
        return "applied" if mode == WRITE else "applied by `torchport fix`"
    if d.fix == "unsafe":
        return "needs --unsafe-fixes" if "unsafe fix" in d.message else "not applied"
    return "not applied (see the message)"


def render_json(findings: Findings) -> str:
    import json

    return json.dumps(json_records(findings), indent=2) + "\n"
