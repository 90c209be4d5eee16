"""What a run over files shows once it has run: the findings in the chosen
format (or the ``--statistics``, or the diff) on standard output or the
``--output-file``, problems and the summary line on standard error, and the
exit code.

Apart from the commands so that files and standard input show their results
the same way.
"""

from __future__ import annotations

from typing import List, Sequence

import click

from codemod.cli.streams import Output
from codemod.cli.summary import (
    View,
    exit_code,
    floor_hint,
    next_steps,
    shared_binding_hints,
    summary_line,
    unsafe_hint,
)
from codemod.output.findings import (
    Findings,
    edits_of,
    path_order,
    problems_of,
    site_order,
)
from codemod.output.formats import renderer
from codemod.output.patch import patch_bytes
from codemod.output.statistics import render_statistics
from codemod.output.text import render_fixes
from codemod.run.job import DIFF, WRITE, FileResult


def findings_of(results: Sequence[FileResult], errors: List[str], view: View):
    """Everything a format shows: the sites, and each problem as a record."""
    problems = [p for line in errors for p in problems_of(*_split_error(line))]
    problems += [p for r in results if r.error for p in problems_of(r.path, r.error)]
    problems.sort(key=lambda p: path_order(p.path))
    edits = {r.path: edits_of(r.diff) for r in results if r.diff}
    shown = [d for r in results for d in _shown(r.diagnostics, view)]
    return Findings(
        sorted(shown, key=site_order), problems, view.mode, edits, view.strict
    )


def _split_error(line: str):
    """``path: reason`` from discovery -> (path, line)."""
    path = line.rsplit(": ", 1)[0] if ": " in line else line
    return path, line


def render(findings: Findings, view: View, sources=None) -> str:
    """The findings in the format of ``view`` (``sources``: path -> text, for the
    snippets of ``full`` where the file is not on disk)."""
    name = "text" if view.output_format == "concise" else view.output_format
    if name in ("text", "full"):
        return renderer(name)(findings, color=view.color, sources=sources)
    if not findings.diagnostics and not findings.problems and name == "github":
        return ""
    return renderer(name)(findings)


def _shown(diagnostics, view: View):
    """Write mode shows what is left; check and diff show every site.

    With --show-fixes, the machine formats list the rewritten sites too (the text
    format lists them in a block of their own).
    """
    if view.mode != WRITE or (view.show_fixes and not _is_text(view)):
        return list(diagnostics)
    return [d for d in diagnostics if not d.applied]


def _is_text(view: View) -> bool:
    return view.output_format in ("text", "concise", "full")


def fix_heading(view: View) -> str:
    return "Fixed in" if view.mode == WRITE else "Would fix in"


def show_results(
    results: Sequence[FileResult],
    errors: List[str],
    view: View,
    out: Output,
    extra=(),
) -> int:
    """Show a run over files; its exit code. ``extra`` diagnostics (unused
    ``noqa`` directives) are shown and counted with the sites."""
    results = sorted(results, key=lambda r: path_order(r.path))
    findings = findings_of(results, errors, view)
    findings.diagnostics = sorted(findings.diagnostics + list(extra), key=site_order)
    if view.mode == DIFF:  # the output carries the diff and nothing else
        for result in results:
            if result.diff:
                out.write_bytes(patch_bytes(result.diff, result.path))
    elif view.statistics:
        out.write(render_statistics(results, view.output_format, view.mode, extra))
    else:
        out.write(render(findings, view))
    if view.show_fixes and _is_text(view) and view.mode != DIFF:
        out.write(render_fixes(results, fix_heading(view)))
    for problem in findings.problems:
        click.echo(problem.text, err=True)
    if not view.quiet and (results or not findings.problems):
        click.echo(summary_line(results, findings, view, extra), err=True)
        hints = [unsafe_hint(results, view.options), floor_hint(results, view.options)]
        lines = next_steps(results, view, extra) + [h for h in hints if h]
        for line in lines + shared_binding_hints(results, view):
            click.echo(line, err=True)
    return exit_code(results, findings.problems, view, extra)
