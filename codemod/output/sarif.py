"""The SARIF format (2.1.0), for GitHub code scanning and other dashboards: each
rule used, documented and linked (``helpUri``), and each site located in its file
(in a notebook, at the line of the ``.ipynb`` that holds the cell's line).

What the run fails on is what a dashboard shows: every site that fails the check
is a ``fail`` result at level ``warning`` (a site ``fix`` would rewrite fails
``check`` too), an informational one a ``note``; only a site this run rewrote is
a ``pass``. Under ``check``, a site with a fix carries it (``fixes``: the lines to
replace), as Ruff's SARIF does.
"""

from __future__ import annotations

import os

from codemod.output.findings import Findings, as_findings, visible
from codemod.output.noqa import UNUSED_NOQA, UNUSED_NOQA_MESSAGE, UNUSED_NOQA_NAME
from codemod.run.job import WRITE

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    """A relative or ``file:`` URI of ``path``, each byte of a name that is not
    UTF-8 percent-encoded as itself."""
    from urllib.parse import quote

    raw = os.fsencode(path).replace(os.sep.encode(), b"/")
    if os.path.isabs(path):
        return "file://" + quote(raw)
    return quote(raw)


def _descriptor(code: str, rules) -> dict:
    from codemod.output.docs import render_rule, rule_summary, rule_url

    rule = rules.get(code)
    if rule is None:
        if code == UNUSED_NOQA:
            return {
                "id": code,
                "name": UNUSED_NOQA_NAME,
                "shortDescription": {"text": UNUSED_NOQA_MESSAGE},
                "defaultConfiguration": {"level": "warning"},
            }
        return {"id": code}
    summary = rule_summary(rule)
    return {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": rule.what or summary},
        "help": {"text": summary, "markdown": render_rule(rule, level=2)},
        "helpUri": rule_url(rule),
        "defaultConfiguration": {
            "level": "note" if rule.severity == "info" else "warning"
        },
        "properties": {"fix": rule.fix.value, "severity": rule.severity},
    }


def _fixes(d, findings: Findings) -> list:
    edits = findings.edits_for(d)
    if not edits:
        return []
    replacements = [
        {
            "deletedRegion": {
                "startLine": e.start,
                "startColumn": 1,
                "endLine": e.end,
                "endColumn": 1,
            },
            "insertedContent": {"text": e.content},
        }
        for e in edits
    ]
    return [
        {
            "description": {"text": f"torchport fix: {visible(d.message)}"},
            "artifactChanges": [
                {
                    "artifactLocation": {"uri": _uri(d.path)},
                    "replacements": replacements,
                }
            ],
        }
    ]


def _result(d, findings: Findings, index, notebooks) -> dict:
    region = {"startLine": d.line, "startColumn": d.col}
    if d.end_col is not None:
        region.update(endLine=d.end_line, endColumn=d.end_col)
    message = visible(d.message)
    if d.cell is not None:  # SARIF knows files: point at the cell's line in it
        message = f"cell {d.cell}:{d.line}:{d.col}: {message}"
        at = notebooks.position(d.path, d.cell, d.line, d.col)
        region = {"startLine": at[0], "startColumn": at[1]} if at else {"startLine": 1}
    written = d.applied and findings.mode == WRITE
    result = {
        "ruleId": d.code,
        "ruleIndex": index[d.code],
        "level": "none" if written else _level(d, findings),
        "kind": "pass" if written else "fail",
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
    fixes = _fixes(d, findings) if d.applied and not written else []
    if fixes:
        result["fixes"] = fixes
    if d.cell is not None:
        result["properties"].update(cell=d.cell, cellLine=d.line, cellColumn=d.col)
    return result


def _level(d, findings: Findings) -> str:
    return "note" if d.severity == "info" and not findings.strict else "warning"


def render_sarif(findings: Findings) -> str:
    """SARIF 2.1.0, for GitHub code scanning and other dashboards."""
    import json

    from codemod import __version__
    from codemod.output.docs import RULES_URL
    from codemod.output.notebook_lines import NotebookLines
    from codemod.rules import all_rules

    rules = all_rules()
    findings = as_findings(findings)
    used = sorted({d.code for d in findings.diagnostics})
    index = {code: i for i, code in enumerate(used)}
    notebooks = NotebookLines()
    results = [_result(d, findings, index, notebooks) for d in findings.diagnostics]
    notifications = [
        {
            "level": "error",
            "message": {"text": visible(p.message)},
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
                        "informationUri": RULES_URL,
                        "rules": [_descriptor(code, rules) for code in used],
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
