"""The JSON format: one record per diagnostic, shaped like Ruff's (with each fix's
edits), then one per problem. A file name that is not valid UTF-8 is written with
its bytes escaped (``\\xff``): JSON can hold no lone surrogate."""

from __future__ import annotations

import re
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
            edits = findings.edits_for(d)
            fix = {
                "applicability": d.fix,
                "applied": d.applied and findings.mode == WRITE,
                "message": visible(_fix_message(d, edits)),
                "edits": [
                    {
                        "content": e.content,
                        "location": {"row": e.start, "column": 1},
                        "end_location": {"row": e.end, "column": 1},
                    }
                    for e in edits
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
                "url": _url(d.code),
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
                "url": None,
                "severity": "error",
                "state": "error",
                "location": _location(p.line, 1),
                "end_location": _location(p.line, 1),
                "noqa_row": None,
                "fix": None,
            }
        )
    return records


# A message's advice, "...; use `.to(_DEVICE())`": what the fix writes.
_ADVICE = re.compile(r"\buse (`[^`]+`)")
LONGEST_LINE_SHOWN = 120


def _fix_message(d: Diagnostic, edits) -> str:
    """What the fix does, said for this site (Ruff's fix ``message``): the line it
    replaces and the one it writes where the change is one line, else the
    portable form the rule's message names; where it waits for a flag or a newer
    target, which."""
    import difflib

    said = ""
    for edit in edits:
        old = edit.removed.strip()
        if "\n" in old or not old or not edit.start <= d.line < edit.end:
            continue
        # The line that takes the old one's place (a binding may come before it).
        new = difflib.get_close_matches(
            old, [line.strip() for line in edit.content.splitlines()], n=1, cutoff=0.6
        )
        if new and max(len(old), len(new[0])) <= LONGEST_LINE_SHOWN:
            said = f"Replace `{old}` with `{new[0]}`"
            break
    if not said:
        advice = _ADVICE.search(d.message)
        said = f"Use {advice.group(1)}" if advice else f"Rewrite {d.name} portably"
    if d.applied:
        return said
    if d.unsafe_available:
        return f"{said} (unsafe: applied with --unsafe-fixes)"
    return f"{said} (not applied: see the message)"


def _url(code: str) -> Optional[str]:
    """The rule's documentation (Ruff's ``url``); None for TP000 and problems."""
    from codemod.output.docs import rule_url
    from codemod.rules import all_rules

    rule = all_rules().get(code)
    return rule_url(rule) if rule is not None else None


def render_json(findings: Findings) -> str:
    import json

    return json.dumps(json_records(findings), indent=2) + "\n"
