"""The commands that run over files: ``fix`` (also ``torchport PATH...``),
``check`` and ``report``; each resolves every file's configuration, runs over the
files and shows what it found.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import click

from codemod.cli.options import (
    COMMANDS,
    CheckCommand,
    config_flags,
    output_options,
    run_options,
)
from codemod.run.files import files_to_process
from codemod.cli.results import show_results
from codemod.cli.streams import (
    Output,
    OutputError,
    fail,
    interruptible,
    wants_color,
)
from codemod.cli.summary import EXIT_CLEAN, EXIT_ERROR, View
from codemod.config.hierarchy import Configurations
from codemod.config.pyproject import ConfigError
from codemod.model.text import printable_path
from codemod.output.findings import plural, visible
from codemod.run import patch_targets
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
@click.pass_context
def fix_command(ctx, paths, show_diff, check, **options) -> None:
    """Rewrite PATHS (files and folders; '-' for stdin) in place."""
    mode = DIFF if show_diff else CHECK if check else WRITE
    implicit = bool(ctx.find_root().meta.get("torchport.implicit_fix"))
    if implicit:
        _refuse_missing(paths)
    if not paths and not options["show_settings"]:
        fail("no paths given (use '.' for this folder, '-' for stdin)")
    _run_command(paths, mode, **options)


@click.command("check", cls=CheckCommand)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff instead.")
@run_options
@output_options
def check_command(paths, show_diff, **options) -> None:
    """Report what `fix` would change and what remains; write nothing.
    PATHS default to the current folder."""
    _run_command(paths or (".",), DIFF if show_diff else CHECK, **options)


def _refuse_missing(paths: Sequence[str]) -> None:
    """``torchport WORD ...`` where WORD is a bare word (no folder separator, no
    suffix) that names nothing: a mistyped subcommand (or folder); nothing is then
    rewritten. A missing ``path/file.py`` is reported as usual and the rest
    processed."""
    missing = [p for p in paths if p != "-" and not os.path.lexists(p)]
    words = [p for p in missing if "/" not in p and os.sep not in p and "." not in p]
    if not words:
        return
    import difflib

    for path in missing:
        close = difflib.get_close_matches(path, COMMANDS, n=1, cutoff=0.6)
        hint = f" (did you mean `torchport {close[0]}`?)" if close else ""
        shown = visible(printable_path(path))
        click.echo(f"{shown}: no such file, folder or command{hint}", err=True)
    click.echo(
        "torchport: nothing was rewritten (a word that names no file is taken for"
        " a mistyped command; `torchport fix PATH...` runs on the other paths)",
        err=True,
    )
    sys.exit(EXIT_ERROR)


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
    color,
    output_file,
    show_settings,
    show_files,
    add_noqa,
    unused_noqa,
    **options,
) -> None:
    flags = config_flags(options)
    out = Output(output_file, wants_color(color))
    configs = Configurations(flags)
    stdin = list(paths) == ["-"]
    view = View(
        output_format,
        mode,
        quiet,
        show_fixes,
        statistics,
        strict=strict,
        exit_zero=exit_zero,
        color=out.color,
    )
    try:
        out.check_open()
        out.open_file()
        if show_settings:
            from codemod.cli.inspect import show_settings as show

            sys.exit(show(paths or (".",), configs, out, output_format))
        if stdin:
            from codemod.cli.stdin import run_stdin

            sys.exit(run_stdin(stdin_filename or "-", configs, view, out))
        request = _Request(jobs, report_file, show_files, add_noqa, unused_noqa)
        code = _run_files(paths, mode, configs, view, out, request)
        out.close()
    except ConfigError as error:
        fail(str(error))
    except OutputError as error:
        fail(str(error))
    sys.exit(code)


@dataclass(frozen=True)
class _Request:
    """What a run over files does besides processing them."""

    jobs: Optional[int]
    report_file: Optional[Path]
    show_files: bool
    add_noqa: bool
    unused_noqa: bool


def _run_files(paths, mode, configs, view, out, request: _Request) -> int:
    with interruptible():
        files, errors = files_to_process(paths, configs.exclude)
        errors += _nothing_found(paths, files)
        if request.show_files:
            from codemod.cli.inspect import show_files as show

            return show(files, errors, out)
        groups = configs.groups(files)
        if not view.quiet:
            for settings in configs.all_settings():
                _warn_old_target(settings)
        if groups:
            view = replace(view, options=groups[0][0].options)
        view = replace(view, skipped_by_default=getattr(files, "skipped", ()))
        if request.add_noqa:
            from codemod.cli.noqa import add_noqa as baseline

            return baseline(files, groups, errors, view, request.jobs)
        report_file = request.report_file
        before = _snapshot(files) if report_file is not None and mode == WRITE else None
        # JSON, SARIF and full show each fix's edit: they need each file's diff.
        wants_diff = mode == CHECK and view.output_format in ("json", "sarif", "full")
        run_mode = DIFF if wants_diff else mode
        facts = _read_run(paths, files, configs)
        results = _run_groups(files, groups, run_mode, request.jobs, view.quiet, facts)
    extra = []
    if request.unused_noqa:
        from codemod.cli.noqa import unused_directives

        extra = unused_directives(files, groups, results)
    try:
        code = show_results(results, errors, view, out, extra)
        if groups and not view.quiet and facts.tests_read:
            click.echo(patch_targets.tests_note(facts), err=True)
    except OutputError as error:
        written = sum(r.written for r in results)
        if written:  # rewritten whole, atomically: only the report of them is lost
            raise OutputError(
                f"{error}; {plural(written, 'file was', 'files were')} rewritten"
                " all the same"
            ) from None
        raise
    if report_file is not None:
        from codemod.output.report import write_report

        settings = groups[0][0] if groups else configs.settings_for(Path("x"))
        try:
            write_report(report_file, results, errors, mode, settings, before)
        except OSError as error:
            shown = visible(printable_path(str(report_file)))
            written = sum(r.written for r in results)
            rewritten = (
                f"; {plural(written, 'file was', 'files were')} rewritten all the same"
                if written
                else ""
            )
            raise OutputError(
                f"cannot write the report {shown}: {error.strerror or error}"
                f" (the previous one is as it was){rewritten}"
            ) from None
        if not view.quiet:
            shown = visible(printable_path(str(report_file)))
            click.echo(f"Wrote the migration report to {shown}", err=True)
    return code


def _nothing_found(paths: Sequence[str], files: List[Path]) -> List[str]:
    """An error line when folders were named and nothing was found in them: a
    check of nothing must not pass."""
    if files:
        return []
    folders = [p for p in paths if os.path.isdir(p)]
    return [
        f"{folder}: no Python files or notebooks found (nothing was checked)"
        for folder in folders
    ]


def _read_run(paths, files, configs) -> patch_targets.RunFacts:
    """What each file must know of the others, the project's tests outside the
    run read too (``torchport fix pkg``: a test of ``pkg`` may patch its calls)."""
    from codemod.run.project_tests import project_tests

    def tests():
        return project_tests(paths or (".",), files, configs.exclude)

    return patch_targets.read_run(files, tests)


def _run_groups(files, groups, mode, jobs, quiet, facts) -> List[FileResult]:
    """Every file processed with the settings of its configuration and what it
    must know of the others (``facts``); the results in the order of ``files``."""
    results: List[Optional[FileResult]] = [None] * len(files)
    progress = _progress(len(files), quiet)
    with progress as bar:
        for settings, indices in groups:
            job = Job(mode, settings.options, settings.format, settings.per_file)
            job = replace(job, patched=facts.patched, tied=facts.tied, star=facts.star)
            done = run([files[i] for i in indices], job, jobs, progress=bar)
            for index, result in zip(indices, done):
                results[index] = result
    return [r for r in results if r is not None]


PROGRESS_MIN_FILES = 50


class _NoProgress:
    def __enter__(self):
        return None

    def __exit__(self, *exc) -> None:
        return None


def _progress(count: int, quiet: bool):
    if quiet or count < PROGRESS_MIN_FILES or not sys.stderr.isatty():
        return _NoProgress()
    # No time estimate: the first files (the ones with CUDA code, parsed while the
    # workers start) say nothing about the rest, and the estimate misled.
    bar = click.progressbar(
        length=count,
        label="torchport",
        file=sys.stderr,
        show_eta=False,
        show_pos=True,
        show_percent=True,
    )

    class _Bar:
        def __enter__(self):
            return bar.__enter__().update

        def __exit__(self, *exc):
            return bar.__exit__(*exc)

    return _Bar()


def _snapshot(files) -> Dict[str, bytes]:
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


_warned = set()


def _warn_old_target(settings) -> None:
    """Say once that a target below 2.6 leaves the device fixes as reports."""
    from codemod.model.versions import ACCELERATOR_TORCH
    from codemod.model.rule import format_version

    target = settings.options.target_torch
    if target < ACCELERATOR_TORCH and (target, settings.target_source) not in _warned:
        _warned.add((target, settings.target_source))
        click.echo(
            f"torchport: target torch {format_version(target)} (from"
            f" {visible(printable_path(settings.target_source))}): torch.accelerator"
            " needs torch >="
            f" {format_version(ACCELERATOR_TORCH)}, so fixes that need it are"
            " reported, not applied",
            err=True,
        )


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
        fail("report: -o must end in .md or .html")
    configs = Configurations(config_flags(options))
    paths = paths or (".",)
    try:
        with interruptible():
            files, errors = files_to_process(paths, configs.exclude)
            errors += _nothing_found(paths, files)
            groups = configs.groups(files)
            facts = _read_run(paths, files, configs)
            results = _run_groups(files, groups, DIFF, options["jobs"], False, facts)
        settings = groups[0][0] if groups else configs.settings_for(Path("x"))
        data = write_report(output, results, errors, DIFF, settings, None)
    except ConfigError as error:
        fail(str(error))
    except OSError as error:
        shown = visible(printable_path(str(output)))
        fail(
            f"cannot write the report {shown}: {error.strerror or error} (the"
            " previous one is as it was)"
        )
    for line in errors + [r.error for r in results if r.error]:
        click.echo(visible(printable_path(line)), err=True)
    shown = visible(printable_path(str(output)))
    click.echo(f"{data.summary_line()}; wrote {shown}", err=True)
    sys.exit(EXIT_ERROR if data.problems else EXIT_CLEAN)
