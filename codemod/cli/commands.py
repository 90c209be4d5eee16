"""The commands that run over files: ``fix`` (also ``torchport PATH...``),
``check`` and ``report``; each resolves the configuration, runs over the files
and shows what it found.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import List, Optional, Sequence

import click

from codemod.cli.options import config_flags, output_options, run_options
from codemod.cli.summary import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    View,
    exit_code,
    statistics_text,
    summary_line,
    unsafe_hint,
)
from codemod.config.pyproject import ConfigError
from codemod.config.settings import resolve_options
from codemod.model.text import printable, printable_path
from codemod.output.findings import Findings, edits_of, problems_of
from codemod.output.formats import renderer
from codemod.output.text import render_fixes
from codemod.run.files import files_to_process
from codemod.run.job import CHECK, DIFF, WRITE, FileResult, Job
from codemod.run.pool import run
from codemod.run.prefilter import needs_parsing


@click.command("fix")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option(
    "--diff",
    "show_diff",
    is_flag=True,
    help="Print a unified diff and nothing else on stdout; write nothing.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 if anything would change or remains.",
)
@run_options
@output_options
def fix_command(paths, show_diff, check, **options) -> None:
    """Rewrite PATHS (files and folders; '-' for stdin) in place."""
    mode = DIFF if show_diff else CHECK if check else WRITE
    _run_command(paths, mode, **options)


@click.command("check")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff instead.")
@run_options
@output_options
def check_command(paths, show_diff, **options) -> None:
    """Report what `fix` would change and what remains; write nothing."""
    _run_command(paths, DIFF if show_diff else CHECK, **options)


def _run_command(
    paths,
    mode,
    jobs,
    output_format,
    show_fixes,
    stdin_filename,
    statistics,
    strict,
    exit_zero,
    report_file,
    quiet,
    **options,
) -> None:
    flags = config_flags(options)
    stdin = list(paths) == ["-"]
    where = [stdin_filename] if stdin and stdin_filename else paths or ["."]
    settings = _settings(where, flags)
    if not quiet:
        _warn_old_target(settings)
    view = View(
        output_format,
        mode,
        quiet,
        show_fixes,
        statistics,
        settings.options,
        strict=strict,
        exit_zero=exit_zero,
        color=_wants_color(),
    )
    # JSON and SARIF give each fix its edit: they need the diff of each file.
    wants_diff = mode == CHECK and output_format in ("json", "sarif")
    job = Job(
        DIFF if wants_diff else mode,
        settings.options,
        settings.format,
        settings.per_file,
    )
    if stdin:
        sys.exit(_run_stdin(job, stdin_filename or "-", view, settings.exclude))
    if not paths:
        click.echo(
            "torchport: no paths given (use '.' for this folder, '-' for stdin)",
            err=True,
        )
        sys.exit(EXIT_ERROR)
    with _interruptible():
        files, errors = files_to_process(paths, settings.exclude)
        before = _snapshot(files) if report_file is not None and mode == WRITE else None
        results = _run(files, job, jobs, progress=_wants_progress(len(files), quiet))
    code = _report(results, errors, view)
    if report_file is not None:
        from codemod.output.report import write_report

        write_report(report_file, results, errors, mode, settings, before)
        if not quiet:
            click.echo(f"Wrote the migration report to {report_file}", err=True)
    sys.exit(code)


def _settings(where, flags):
    try:
        return resolve_options(where, flags)
    except ConfigError as error:
        click.echo(f"torchport: {printable(str(error))}", err=True)
        sys.exit(EXIT_ERROR)


def _snapshot(files) -> dict:
    """The bytes of the files a rewrite may change, for the report's diffs."""
    kept = {}
    for path in files:
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        if needs_parsing(data):
            kept[str(path)] = data
    return kept


@contextlib.contextmanager
def _interruptible():
    """Ctrl-C and SIGTERM: stop the workers, say so in one line, exit 130 / 143.

    Every file is then untouched or completely rewritten (``io.write_atomic``).
    """

    def terminated(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    except KeyboardInterrupt:
        click.echo(
            "torchport: interrupted; files not yet rewritten are untouched", err=True
        )
        sys.exit(EXIT_INTERRUPTED)
    except SystemExit as stop:
        if stop.code == 128 + signal.SIGTERM:
            click.echo(
                "torchport: terminated; files not yet rewritten are untouched", err=True
            )
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


PROGRESS_MIN_FILES = 50


def _wants_color() -> bool:
    """Colour on a terminal; never under NO_COLOR, in CI logs, or when piped."""
    if os.environ.get("NO_COLOR") or os.environ.get("CI"):
        return False
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


def _wants_progress(count: int, quiet: bool) -> bool:
    return not quiet and count >= PROGRESS_MIN_FILES and sys.stderr.isatty()


def _run(files, job: Job, jobs: Optional[int], progress: bool) -> List[FileResult]:
    if not progress:
        return run(files, job, jobs)
    # No time estimate: the first files (the ones with CUDA code, parsed while the
    # workers start) say nothing about the rest, and the estimate misled.
    with click.progressbar(
        length=len(files),
        label="torchport",
        file=sys.stderr,
        show_eta=False,
        show_pos=True,
        show_percent=True,
    ) as bar:
        return run(files, job, jobs, progress=bar.update)


def _warn_old_target(settings) -> None:
    """Say once that a target below 2.6 leaves the device fixes as reports."""
    from codemod.model.versions import ACCELERATOR_TORCH
    from codemod.model.rule import format_version

    target = settings.options.target_torch
    if target < ACCELERATOR_TORCH:
        click.echo(
            f"torchport: target torch {format_version(target)} (from"
            f" {settings.target_source}): torch.accelerator needs torch >="
            f" {format_version(ACCELERATOR_TORCH)}, so fixes that need it are"
            " reported, not applied",
            err=True,
        )


def _run_stdin(job: Job, name: str, view: View, exclude) -> int:
    data = sys.stdin.buffer.read()
    path = Path(name) if name != "-" else None
    if path is not None and exclude is not None and exclude(path, False):
        # Ruff's --force-exclude: an excluded file passes through untouched.
        if view.mode == WRITE:
            sys.stdout.buffer.write(data)
        return EXIT_CLEAN
    if path is not None and job.per_file is not None:
        job = replace(job, options=job.per_file(path))
    from codemod.run.process import process_source  # standard input only

    result = process_source(name, data, job, path)
    if view.mode == WRITE:
        sys.stdout.buffer.write(result.output if result.output is not None else data)
        sys.stdout.flush()
    elif view.mode == DIFF:
        click.echo(result.diff, nl=False)
    stream = sys.stderr if view.mode in (WRITE, DIFF) else sys.stdout
    findings = _findings([result], [], view)
    if view.mode != DIFF:
        if view.statistics:
            stream.write(statistics_text([result]))
        else:
            stream.write(_render(findings, view))
    hint = unsafe_hint([result], view.options)
    if hint and not view.quiet:
        click.echo(hint, err=True)
    if view.show_fixes and view.output_format == "text" and view.mode != DIFF:
        stream.write(render_fixes([result], _fix_heading(view)))
    for problem in findings.problems:
        click.echo(problem.text, err=True)
    return exit_code([result], findings.problems, view)


def _findings(results: Sequence[FileResult], errors: List[str], view: View):
    """Everything a format shows: the sites, and each problem as a record."""
    problems = [p for line in errors for p in problems_of(*_split_error(line))]
    problems += [p for r in results if r.error for p in problems_of(r.path, r.error)]
    edits = {r.path: edits_of(r.diff) for r in results if r.diff}
    shown = [d for r in results for d in _shown(r.diagnostics, view)]
    return Findings(shown, problems, view.mode, edits, view.strict)


def _split_error(line: str):
    """``path: reason`` from discovery -> (path, line)."""
    path = line.rsplit(": ", 1)[0] if ": " in line else line
    return path, line


def _render(findings: Findings, view: View) -> str:
    if view.output_format == "text":
        return renderer("text")(findings, color=view.color)
    if not findings.diagnostics and not findings.problems:
        if view.output_format == "github":
            return ""
    return renderer(view.output_format)(findings)


def _shown(diagnostics, view: View):
    """Write mode shows what is left; check and diff show every site.

    With --show-fixes, the machine formats list the rewritten sites too (the text
    format lists them in a block of their own).
    """
    if view.mode != WRITE or (view.show_fixes and view.output_format != "text"):
        return list(diagnostics)
    return [d for d in diagnostics if not d.applied]


def _fix_heading(view: View) -> str:
    return "Fixed in" if view.mode == WRITE else "Would fix in"


def _report(results: Sequence[FileResult], errors: List[str], view: View) -> int:
    findings = _findings(results, errors, view)
    if view.mode == DIFF:  # stdout carries the diff and nothing else
        for result in results:
            if result.diff:
                click.echo(result.diff, nl=False)
    elif view.statistics:
        click.echo(statistics_text(results), nl=False)
    else:
        click.echo(_render(findings, view), nl=False)
    if view.show_fixes and view.output_format == "text" and view.mode != DIFF:
        click.echo(render_fixes(results, _fix_heading(view)), nl=False)
    for problem in findings.problems:
        click.echo(problem.text, err=True)
    if not view.quiet and (results or not findings.problems):
        click.echo(summary_line(results, findings, view), err=True)
        hint = unsafe_hint(results, view.options)
        if hint:
            click.echo(hint, err=True)
    return exit_code(results, findings.problems, view)


@click.command("report")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option(
    "-o",
    "--output",
    "output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The report to write: FILE.md (Markdown) or FILE.html (one page).",
)
@run_options
def report_command(paths, output, **options) -> None:
    """Write a migration report of PATHS: what `fix` would rewrite and what needs a
    human. Writes no code."""
    from codemod.output.report import write_report

    if output.suffix.lower() not in (".md", ".html", ".htm"):
        click.echo("torchport: report: -o must end in .md or .html", err=True)
        sys.exit(EXIT_ERROR)
    flags = config_flags(options)
    paths = paths or (".",)
    settings = _settings(paths, flags)
    job = Job(DIFF, settings.options, settings.format, settings.per_file)
    with _interruptible():
        files, errors = files_to_process(paths, settings.exclude)
        results = _run(files, job, options["jobs"], _wants_progress(len(files), False))
    data = write_report(output, results, errors, DIFF, settings, None)
    for line in errors + [r.error for r in results if r.error]:
        click.echo(printable_path(line), err=True)
    click.echo(f"{data.summary_line()}; wrote {output}", err=True)
    sys.exit(EXIT_ERROR if data.problems else EXIT_CLEAN)
