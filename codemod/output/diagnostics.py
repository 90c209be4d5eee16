"""The diagnostic type, the problems a run meets, and the output formats.

Every format is complete on its own: diagnostics and the files torchport could not
process (``Problem``) are both records, so ``--output-format json`` alone tells a
program everything the run found.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, List, Optional

from codemod.model.text import printable, printable_path

WRITE, CHECK, DIFF = "write", "check", "diff"  # as codemod.run.job


@dataclass(frozen=True)
class Problem:
    """A path torchport could not process: unreadable, unparsable, or a bug."""

    path: str
    message: str  # one line, without the path
    kind: str  # "io-error" | "parse-error" | "internal-error"
    line: Optional[int] = None

    @property
    def text(self) -> str:
        """``path: reason``; in a notebook ``path:cell N: reason``."""
        in_cell = self.path.endswith(".ipynb") and self.message.startswith("cell ")
        separator = "" if in_cell else " "
        return f"{printable_path(self.path)}:{separator}{_clean(self.message)}"


_KINDS = (
    ("internal error", "internal-error"),
    ("cannot rewrite", "internal-error"),
    ("worker process died", "internal-error"),
    ("cannot parse", "parse-error"),
    ("cannot decode", "parse-error"),
)
_LINE = re.compile(r"\bline (\d+)\b")


def problems_of(path: str, error: str) -> List[Problem]:
    """The ``path: reason`` error line(s) of one file as records (a notebook may
    join several with '; ')."""
    parts = [error]
    if path.endswith(".ipynb"):
        parts = [p for p in re.split(rf"; (?={re.escape(path)}:)", error) if p]
    found = []
    for part in parts:
        message = (
            part[len(path) :].lstrip(":").lstrip() if part.startswith(path) else part
        )
        kind = next((k for words, k in _KINDS if words in message), "io-error")
        line = _LINE.search(message)
        found.append(Problem(path, message, kind, int(line.group(1)) if line else None))
    return found


@dataclass(frozen=True)
class Edit:
    """Replace lines ``start`` up to (not including) ``end`` with ``content``."""

    start: int
    end: int
    content: str


def edits_of(diff: str) -> List[Edit]:
    """The changed blocks of a unified diff, as edits of the old file's lines."""
    edits: List[Edit] = []
    old_line = 0
    start: Optional[int] = None
    added: List[str] = []
    removed = 0

    def close() -> None:
        nonlocal start, added, removed
        if start is not None:
            edits.append(Edit(start, start + removed, "".join(added)))
        start, added, removed = None, [], 0

    for line in diff.splitlines(keepends=True):
        if line.startswith("@@"):
            close()
            old_line = int(re.match(r"@@ -(\d+)", line).group(1))
            if ",0 " in line.split("+")[0]:  # an insertion before the first line
                old_line += 1
        elif line.startswith(("---", "+++")) and start is None and not added:
            continue
        elif line.startswith("-"):
            start = old_line if start is None else start
            removed += 1
            old_line += 1
        elif line.startswith("+"):
            start = old_line if start is None else start
            added.append(line[1:])
        elif line.startswith("\\"):
            if added:  # "\ No newline at end of file" after an added line
                added[-1] = added[-1].rstrip("\n")
        else:
            close()
            old_line += 1
    close()
    return edits


def _as_findings(given) -> "Findings":
    """Renderers take Findings, or a plain list of diagnostics."""
    return given if isinstance(given, Findings) else Findings(list(given))


@dataclass
class Findings:
    """What a run shows: its diagnostics, its problems, and how it ran."""

    diagnostics: List[Diagnostic]
    problems: List[Problem] = field(default_factory=list)
    mode: str = WRITE
    edits: Dict[str, List[Edit]] = field(default_factory=dict)  # path -> change blocks
    strict: bool = False

    def state(self, d: Diagnostic) -> str:
        if d.applied:
            return "rewritten" if self.mode == WRITE else "would-rewrite"
        return "reported"

    def edits_for(self, d: Diagnostic) -> List[Edit]:
        """The change blocks that carry the fix of ``d`` (input lines; check/diff).

        Blocks that touch no site (the device binding, imports) go with the first
        fixed site of the file, so applying every site's edits gives the rewrite.
        """
        blocks = self.edits.get(d.path)
        if not blocks or not d.applied or d.cell is not None:
            return []
        fixed = [x for x in self.diagnostics if x.path == d.path and x.applied]

        def touches(block: Edit, site: Diagnostic) -> bool:
            last = max(block.end - 1, block.start)
            return block.start <= site.end_line and last >= site.line

        mine = [b for b in blocks if touches(b, d)]
        if fixed and fixed[0] is d:
            mine += [b for b in blocks if not any(touches(b, s) for s in fixed)]
        return sorted(set(mine), key=lambda b: (b.start, b.end))


# File names and messages go on one line, printable: no control character can
# forge another record or rewrite the terminal.
_clean = printable


# -- text ---------------------------------------------------------------------------------
STYLES = {"path": "bold", "code": "red", "info": "cyan", "fix": "cyan"}


def render_text(findings: Findings, color: bool = False) -> str:
    """``path:line:col: CODE [*] message``; ``[*]`` marks a site torchport rewrites
    (or would) with the options given, ``(info)`` one that runs everywhere as it is.
    Problems go to standard error (``render_problems``)."""
    import click

    findings = _as_findings(findings)

    def style(text: str, key: str) -> str:
        if not color:
            return text
        if STYLES[key] == "bold":
            return click.style(text, bold=True)
        return click.style(text, fg=STYLES[key])

    lines = []
    for d in findings.diagnostics:
        marker = " " + style("[*]", "fix") if d.applied else ""
        info = " " + style("(info)", "info") if d.severity == "info" else ""
        code = style(d.code, "info" if d.severity == "info" else "code")
        lines.append(
            f"{style(printable_path(d.where), 'path')}:{d.line}:{d.col}: {code}{marker}{info}"
            f" {_clean(d.message)}"
        )
    return "".join(line + "\n" for line in lines)


# -- json ---------------------------------------------------------------------------------
def _location(row: Optional[int], column: Optional[int]) -> Optional[dict]:
    return None if row is None else {"row": row, "column": column}


def json_records(findings: Findings) -> List[dict]:
    """One record per diagnostic (shaped like Ruff's JSON), then one per problem."""
    findings = _as_findings(findings)
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
                "filename": d.path,
                "cell": d.cell,
                "code": d.code,
                "name": d.name,
                "message": d.message,
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
                "filename": p.path,
                "cell": None,
                "code": None,
                "name": p.kind,
                "message": p.message,
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


# -- github -------------------------------------------------------------------------------
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
    findings = _as_findings(findings)
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


# -- sarif --------------------------------------------------------------------------------
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
    findings = _as_findings(findings)
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


RENDERERS: Dict[str, Callable[[Findings], str]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
}


def render_fixes(results, heading: str = "Fixed in") -> str:
    """The sites rewritten in each file (``--show-fixes``); ``results`` are FileResults."""
    out: List[str] = []
    for result in results:
        fixed = [d for d in result.diagnostics if d.applied]
        if not fixed or not result.changed:
            continue
        out.append(f"{heading} {_clean(result.path)}:\n")
        for d in fixed:
            cell = f"cell {d.cell}:" if d.cell is not None else ""
            out.append(f"  {cell}{d.line}:{d.col}: {d.code} {_clean(d.message)}\n")
    return "".join(out)


def plural(count: int, word: str, many: Optional[str] = None) -> str:
    """``1 site``, ``2 sites``, ``1 fix``, ``3 fixes``."""
    return f"{count} {word if count == 1 else many or word + 's'}"
