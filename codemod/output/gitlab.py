"""The GitLab format: a Code Quality report (JSON), which GitLab shows in a merge
request beside the lines it names (``artifacts: reports: codequality``).

Each site is an issue of severity ``major`` when it fails the check (under
``check``, a site ``fix`` would rewrite does), ``info`` when it runs everywhere as
it stands or was rewritten; a file that could not be processed is
``critical``. The fingerprint, which GitLab uses to tell an issue that is new
from one that stays, hashes the file, the rule and the line's own text rather than
its number, so an edit above a site keeps its issue.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import List, Optional

from codemod.output.findings import Findings, as_findings, exact_name, visible


def _fingerprint(parts: List[str], seen: Counter) -> str:
    key = "\0".join(parts)
    seen[key] += 1  # the same text twice in a file: two issues
    return hashlib.sha256(f"{key}\0{seen[key]}".encode("utf-8", "replace")).hexdigest()


def _line_text(path: str, line: int, cache: dict, cell: Optional[int]) -> str:
    if cell is not None:
        return f"cell {cell}:{line}"
    if path not in cache:
        try:
            with open(path, "rb") as handle:
                cache[path] = handle.read().decode("utf-8", "replace").splitlines()
        except OSError:
            cache[path] = []
    lines = cache[path]
    return lines[line - 1].strip() if 0 < line <= len(lines) else str(line)


def render_gitlab(findings: Findings) -> str:
    findings = as_findings(findings)
    issues, seen, cache = [], Counter(), {}
    for d in findings.diagnostics:
        failing = findings.fails(d)
        text = _line_text(d.path, d.line, cache, d.cell)
        where = f"cell {d.cell}:{d.line}:{d.col}: " if d.cell is not None else ""
        issues.append(
            {
                "type": "issue",
                "check_name": d.code,
                "description": visible(f"{where}{d.code} {d.message}"),
                "categories": ["Compatibility"],
                "severity": "major" if failing else "info",
                "fingerprint": _fingerprint([d.path, d.code, text], seen),
                "location": {
                    "path": exact_name(d.path),
                    "lines": {
                        "begin": 1 if d.cell is not None else d.line,
                        "end": 1 if d.cell is not None else d.end_line,
                    },
                },
            }
        )
    for p in findings.problems:
        issues.append(
            {
                "type": "issue",
                "check_name": p.kind,
                "description": visible(p.message),
                "categories": ["Bug Risk"],
                "severity": "critical",
                "fingerprint": _fingerprint([p.path, p.kind, p.message], seen),
                "location": {
                    "path": exact_name(p.path),
                    "lines": {"begin": p.line or 1, "end": p.line or 1},
                },
            }
        )
    return json.dumps(issues, indent=2) + "\n"
