"""``torchport -`` and ``torchport check -``: one file read from standard input,
named (and configured) by ``--stdin-filename``; the code goes to standard output
(fix) or the diff does (``--diff``), the diagnostics then go to standard error.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import click

from codemod.cli.results import findings_of, fix_heading, render
from codemod.cli.streams import Output, fail
from codemod.cli.summary import (
    EXIT_CLEAN,
    View,
    exit_code,
    floor_hint,
    next_steps,
    unsafe_hint,
)
from codemod.output.patch import patch_bytes
from codemod.output.statistics import render_statistics
from codemod.output.text import render_fixes
from codemod.run.job import DIFF, WRITE, Job


def read_stdin() -> bytes:
    """Standard input's bytes; exit 2 with one line when it is closed or fails."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        fail("cannot read standard input: it is closed")
    try:
        return stream.read()
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error) or "closed"
        fail(f"cannot read standard input: {reason}")
    return b""  # not reached


def run_stdin(name: str, configs, view: View, out: Output) -> int:
    path = Path(name) if name != "-" else None
    settings = configs.settings_for(path if path is not None else Path("-"))
    data = read_stdin()
    if path is not None and configs.exclude(path, False):
        # Ruff's --force-exclude: an excluded file passes through untouched.
        if view.mode == WRITE:
            out.write_bytes(data)
        return EXIT_CLEAN
    options = settings.options
    if path is not None and settings.per_file is not None:
        options = settings.per_file(path)
    job = Job(view.mode, options, settings.format, settings.per_file)
    view = replace(view, options=options)
    from codemod.run.process import process_source  # standard input only

    result = process_source(name, data, replace(job, per_file=None), path)
    if view.mode == WRITE:
        out.write_bytes(result.output if result.output is not None else data)
    elif view.mode == DIFF:
        out.write_bytes(patch_bytes(result.diff, result.path))
    # The code (or the diff) is on standard output: the rest goes to stderr.
    shown = out if view.mode not in (WRITE, DIFF) else Output(None, False, err=True)
    findings = findings_of([result], [], view)
    if view.mode != DIFF:
        if view.statistics:
            shown.write(render_statistics([result], view.output_format, view.mode))
        else:
            shown.write(render(findings, view, sources={name: _text(data)}))
    hints = [unsafe_hint([result], view.options), floor_hint([result], view.options)]
    if not view.quiet:
        for line in next_steps([result], view) + [h for h in hints if h]:
            click.echo(line, err=True)
    if view.show_fixes and view.output_format == "text" and view.mode != DIFF:
        shown.write(render_fixes([result], fix_heading(view)))
    for problem in findings.problems:
        click.echo(problem.text, err=True)
    return exit_code([result], findings.problems, view)


def _text(data: bytes) -> str:
    return data.decode("utf-8-sig", errors="replace")
