"""The JUnit format (XML, as Ruff writes it): one test suite per file, one test
case per site, so that a CI that shows test reports shows the migration's sites.

A site that fails the check is a ``<failure>`` (under ``check``, one ``fix``
would rewrite too); an informational or a rewritten one passes, with its message as the case's output; a file
that could not be processed is an ``<error>``. With nothing found, one passing
case says so. Names and messages are escaped for XML, and their control
characters (which XML 1.0 cannot hold) written visibly (``\\x1b``).
"""

from __future__ import annotations

from typing import Dict, List
from xml.sax.saxutils import escape, quoteattr

from codemod.model.text import printable
from codemod.output.findings import Findings, as_findings


def _attr(text) -> str:
    return quoteattr(printable(str(text)))


def _text(text: str) -> str:
    return escape(printable(text))


def render_junit(findings: Findings) -> str:
    findings = as_findings(findings)
    suites: Dict[str, List[str]] = {}
    failures: Dict[str, int] = {}
    errors: Dict[str, int] = {}
    for d in findings.diagnostics:
        where = f"cell {d.cell}:" if d.cell is not None else ""
        place = f"{where}{d.line}:{d.col}"
        head = (
            f"    <testcase name={_attr(f'torchport.{d.code}')}"
            f" classname={_attr(d.path)} file={_attr(d.path)} line={_attr(d.line)}"
        )
        body = _text(f"{place}: {d.code} {d.message}")
        if findings.fails(d):
            failures[d.path] = failures.get(d.path, 0) + 1
            case = (
                f"{head}>\n      <failure message={_attr(d.message)}>{body}</failure>"
                "\n    </testcase>"
            )
        else:
            case = f"{head}>\n      <system-out>{body}</system-out>\n    </testcase>"
        suites.setdefault(d.path, []).append(case)
    for p in findings.problems:
        errors[p.path] = errors.get(p.path, 0) + 1
        suites.setdefault(p.path, []).append(
            f"    <testcase name={_attr(f'torchport.{p.kind}')}"
            f" classname={_attr(p.path)} file={_attr(p.path)}>\n"
            f"      <error message={_attr(p.message)}>{_text(p.message)}</error>\n"
            "    </testcase>"
        )
    if not suites:
        suites["torchport"] = [
            '    <testcase name="No sites found" classname="torchport"/>'
        ]
    total = sum(len(cases) for cases in suites.values())
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuites name="torchport" tests="{total}"'
        f' failures="{sum(failures.values())}" errors="{sum(errors.values())}">',
    ]
    for path, cases in suites.items():
        out.append(
            f'  <testsuite name={_attr(path)} tests="{len(cases)}"'
            f' failures="{failures.get(path, 0)}" errors="{errors.get(path, 0)}">'
        )
        out += cases
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"
