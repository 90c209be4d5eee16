"""The SARIF format (2.1.0), for GitHub code scanning and other dashboards: each
rule used, documented, and each site and problem located in its file."""

from __future__ import annotations

import os

from codemod.output.findings import Findings, as_findings

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    from pathlib import Path
    from urllib.parse import quote

    if os.path.isabs(path):
        return Path(path).as_uri()
    return quote(Path(path).as_posix())


def render_sarif(findings: Findings) -> str:
    """SARIF 2.1.0, for GitHub code scanning and other dashboards."""
    import json

    from codemod import __version__
    from codemod.rules import all_rules

    rules = all_rules()
    findings = as_findings(findings)
    used = sorted({d.code for d in findings.diagnostics})
    index = {code: i for i, code in enumerate(used)}
    descriptors = []
    for code in used:
        rule = rules.get(code)
        descriptor = {"id": code}
        if rule is not None:
            from codemod.output.docs import render_rule

            descriptor.update(
                name=rule.name,
                shortDescription={"text": rule.message},
                fullDescription={"text": rule.what or rule.message},
                help={"text": rule.message, "markdown": render_rule(rule, level=2)},
                defaultConfiguration={
                    "level": "note" if rule.severity == "info" else "warning"
                },
                properties={"fix": rule.fix.value, "severity": rule.severity},
            )
        descriptors.append(descriptor)
    results = []
    for d in findings.diagnostics:
        region = {"startLine": d.line, "startColumn": d.col}
        if d.end_col is not None:
            region.update(endLine=d.end_line, endColumn=d.end_col)
        message = d.message
        if d.cell is not None:  # the region is in the cell; SARIF knows files only
            message = f"cell {d.cell}:{d.line}:{d.col}: {message}"
            region = {"startLine": 1}
        result = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": (
                "note" if d.severity == "info" and not findings.strict else "warning"
            ),
            "kind": "pass" if d.applied else "fail",
            "message": {"text": message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(d.path)},
                        "region": region,
                    }
                }
            ],
            "properties": {"state": findings.state(d), "fix": d.fix},
        }
        if d.applied:
            result["level"] = "none"  # "pass" results carry no level but "none"
        if d.cell is not None:
            result["properties"]["cell"] = d.cell
        results.append(result)
    notifications = [
        {
            "level": "error",
            "message": {"text": p.message},
            "descriptor": {"id": p.kind},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(p.path)},
                        **({"region": {"startLine": p.line}} if p.line else {}),
                    }
                }
            ],
        }
        for p in findings.problems
    ]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "torchport",
                        "version": __version__,
                        "rules": descriptors,
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": not findings.problems,
                        "toolExecutionNotifications": notifications,
                    }
                ],
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
