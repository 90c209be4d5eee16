"""The command line: parse options, call the engine, print. Nothing else lives here."""

from __future__ import annotations

import contextlib
import signal
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import List, Optional, Sequence

import click

from codemod import __version__
from codemod.config import ConfigError, resolve_options
from codemod.diagnostics import RENDERERS, render_fixes
from codemod.options import Options
from codemod.text import printable, printable_path
from codemod.engine import (
    CHECK,
    DIFF,
    WRITE,
    FileResult,
    Job,
    discover,
    process_source,
    run,
)

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class DefaultGroup(click.Group):
    """``torchport PATH...`` runs the rewrite; ``torchport rules`` is a subcommand."""

    def parse_args(self, ctx, args):
        if not args or args[0] not in (*self.commands, "--version"):
            args = ["run", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx, formatter):
        formatter.write_usage("torchport", "[OPTIONS] [PATH]... | rules | explain CODE")


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="torchport")
def main() -> None:
    """Rewrite CUDA-specific PyTorch code into device-portable code."""


@main.command("run")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option(
    "--diff", "show_diff", is_flag=True, help="Print a unified diff; write nothing."
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 if anything would change or remains.",
)
@click.option(
    "--select", help="Comma-separated rule codes or prefixes to enable (default: TP)."
)
@click.option("--ignore", help="Comma-separated rule codes or prefixes to disable.")
@click.option(
    "--unsafe-fixes/--no-unsafe-fixes",
    default=None,
    help="Also apply fixes that need review.",
)
@click.option(
    "--target-torch", help="Oldest torch release the code must run on, e.g. 2.6."
)
@click.option(
    "--device-name", help="Name of the module-level device binding (default DEVICE)."
)
@click.option(
    "--output-format",
    type=click.Choice(sorted(RENDERERS)),
    default="text",
    show_default=True,
)
@click.option(
    "--format/--no-format",
    "format_code",
    default=None,
    help="Black the changed lines (default on).",
)
@click.option(
    "--show-fixes", is_flag=True, help="List the sites rewritten in each file."
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    help="Worker processes (default: all cores).",
)
@click.option("--stdin-filename", help="The name to report for input read from '-'.")
@click.option(
    "--statistics",
    is_flag=True,
    help="Print counts per rule and family instead of each site.",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Print diagnostics only: no summary, no progress bar.",
)
def run_command(
    paths,
    show_diff,
    check,
    select,
    ignore,
    unsafe_fixes,
    target_torch,
    device_name,
    output_format,
    format_code,
    show_fixes,
    jobs,
    stdin_filename,
    statistics,
    quiet,
) -> None:
    """Rewrite PATHS (files and folders; '-' for stdin) in place."""
    mode = DIFF if show_diff else CHECK if check else WRITE
    flags = {
        "select": select,
        "ignore": ignore,
        "unsafe-fixes": unsafe_fixes,
        "target-torch": target_torch,
        "device-name": device_name,
        "format": format_code,
    }
    stdin = list(paths) == ["-"]
    where = [stdin_filename] if stdin and stdin_filename else paths or ["."]
    try:
        settings = resolve_options(where, flags)
    except ConfigError as error:
        click.echo(f"torchport: {printable(str(error))}", err=True)
        sys.exit(EXIT_ERROR)
    if not quiet:
        _warn_old_target(settings)
    job = Job(mode, settings.options, settings.format, settings.per_file)
    view = View(output_format, mode, quiet, show_fixes, statistics, settings.options)
    if stdin:
        sys.exit(_run_stdin(job, stdin_filename or "-", view))
    if not paths:
        click.echo(
            "torchport: no paths given (use '.' for this folder, '-' for stdin)",
            err=True,
        )
        sys.exit(EXIT_ERROR)
    with _interruptible():
        files, errors = discover(paths, exclude=settings.exclude, extensions=EXTENSIONS)
        if settings.exclude is not None:
            # Files named on the command line (as pre-commit does) are excluded too.
            files = [f for f in files if not settings.exclude(f, False)]
        results = _run(files, job, jobs, progress=_wants_progress(len(files), quiet))
    sys.exit(_report(results, errors, view))


EXIT_INTERRUPTED = 130  # 128 + SIGINT, like a shell


@contextlib.contextmanager
def _interruptible():
    """Ctrl-C and SIGTERM: stop the workers, say so in one line, exit 130 / 143.

    Every file is then untouched or completely rewritten (engine.write_atomic).
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


EXTENSIONS = (".py", ".ipynb")
PROGRESS_MIN_FILES = 50


@dataclass(frozen=True)
class View:
    """How results are shown."""

    output_format: str
    mode: str
    quiet: bool = False
    show_fixes: bool = False
    statistics: bool = False
    options: Optional[Options] = None  # for the count of unsafe fixes left


def _wants_progress(count: int, quiet: bool) -> bool:
    return not quiet and count >= PROGRESS_MIN_FILES and sys.stderr.isatty()


def _run(files, job: Job, jobs: Optional[int], progress: bool) -> List[FileResult]:
    if not progress:
        return run(files, job, jobs)
    with click.progressbar(
        length=len(files), label="torchport", file=sys.stderr
    ) as bar:
        return run(files, job, jobs, progress=bar.update)


def _warn_old_target(settings) -> None:
    """Say once that a target below 2.6 leaves the device fixes as reports."""
    from codemod.options import ACCELERATOR_TORCH
    from codemod.rules import format_version

    target = settings.options.target_torch
    if target < ACCELERATOR_TORCH:
        click.echo(
            f"torchport: target torch {format_version(target)} (from"
            f" {settings.target_source}): torch.accelerator needs torch >="
            f" {format_version(ACCELERATOR_TORCH)}, so fixes that need it are"
            " reported, not applied",
            err=True,
        )


def _run_stdin(job: Job, name: str, view: View) -> int:
    data = sys.stdin.buffer.read()
    path = Path(name) if name != "-" else None
    if path is not None and job.per_file is not None:
        job = replace(job, options=job.per_file(path))
    result = process_source(name, data, job, path)
    if view.mode == WRITE:
        sys.stdout.buffer.write(result.output if result.output is not None else data)
        sys.stdout.flush()
    elif view.mode == DIFF and result.diff:
        click.echo(result.diff, nl=False)
    shown = _shown(result.diagnostics, view)
    stream = sys.stderr if view.mode == WRITE else sys.stdout
    if view.statistics:
        stream.write(statistics_text([result]))
    elif shown or view.output_format == "json":
        stream.write(RENDERERS[view.output_format](shown))
    hint = unsafe_hint([result], view.options)
    if hint and not view.quiet:
        click.echo(hint, err=True)
    if view.show_fixes and view.output_format == "text":
        stream.write(render_fixes([result], _fix_heading(view)))
    if result.error:
        click.echo(printable_path(result.error), err=True)
        return EXIT_ERROR
    if _remaining(result.diagnostics) or (view.mode != WRITE and result.changed):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _shown(diagnostics, view: View):
    """Write mode shows what is left; check and diff show every site.

    With --show-fixes, the json and github formats list the rewritten sites too
    (the text format lists them in a block of their own).
    """
    if view.mode != WRITE or (view.show_fixes and view.output_format != "text"):
        return list(diagnostics)
    return [d for d in diagnostics if not d.applied]


def _fix_heading(view: View) -> str:
    return "Fixed in" if view.mode == WRITE else "Would fix in"


def _remaining(diagnostics) -> List:
    return [d for d in diagnostics if not d.applied]


def _report(results: Sequence[FileResult], errors: List[str], view: View) -> int:
    for result in results:
        if result.diff:
            click.echo(result.diff, nl=False)
    shown = [d for r in results for d in _shown(r.diagnostics, view)]
    if view.statistics:
        click.echo(statistics_text(results), nl=False)
    elif shown or view.output_format == "json":
        click.echo(RENDERERS[view.output_format](shown), nl=False)
    if view.show_fixes and view.output_format == "text":
        click.echo(render_fixes(results, _fix_heading(view)), nl=False)
    errors = errors + [r.error for r in results if r.error]
    for line in errors:
        click.echo(printable_path(line), err=True)
    changed = [r for r in results if r.changed and not r.error]
    remaining = [d for r in results for d in _remaining(r.diagnostics)]
    if not view.quiet:
        verb = "Rewrote" if view.mode == WRITE else "Would rewrite"
        fixed = sum(d.applied for r in changed for d in r.diagnostics)
        click.echo(
            f"{verb} {len(changed)} of {len(results)} files ({fixed} sites);"
            f" {len(remaining)} sites left; {len(errors)} errors",
            err=True,
        )
        hint = unsafe_hint(results, view.options)
        if hint:
            click.echo(hint, err=True)
    if errors:
        return EXIT_ERROR
    if remaining or (view.mode != WRITE and changed):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def statistics_text(results: Sequence[FileResult]) -> str:
    """Counts per rule code, then one line: files scanned and changed, sites
    rewritten and reported, per family (TP1, TP2, ...)."""
    from collections import Counter

    rewritten: Counter = Counter()
    reported: Counter = Counter()
    names = {}
    for result in results:
        for d in result.diagnostics:
            (rewritten if d.applied else reported)[d.code] += 1
            names[d.code] = d.name
    lines = []
    if names:
        lines.append(
            f"{'sites':>5}  {'code':<6} {'rewritten':>9} {'reported':>8}  rule"
        )
    for code in sorted(names):
        total = rewritten[code] + reported[code]
        lines.append(
            f"{total:>5}  {code:<6} {rewritten[code]:>9} {reported[code]:>8}  {names[code]}"
        )
    families = sorted({code[:3] for code in names})
    by_family = "; ".join(
        f"{family}: {sum(n for c, n in rewritten.items() if c.startswith(family))}"
        f" rewritten, {sum(n for c, n in reported.items() if c.startswith(family))}"
        " reported"
        for family in families
    )
    changed = sum(1 for r in results if r.changed and not r.error)
    lines.append(
        f"Scanned {len(results)} files, changed {changed};"
        f" {sum(rewritten.values())} sites rewritten, {sum(reported.values())} reported"
        + (f" ({by_family})" if by_family else "")
    )
    return "".join(line + "\n" for line in lines)


def unsafe_hint(results: Sequence[FileResult], options) -> str:
    """'N unsafe fixes available with --unsafe-fixes', or '' when there are none.

    A fix the target torch release cannot take does not count: the flag would not
    apply it either.
    """
    if options is None or options.unsafe_fixes:
        return ""
    from codemod.rules import REGISTRY

    def takes(code: str) -> bool:
        rule = REGISTRY.get(code)
        return (
            rule is None
            or rule.min_torch is None
            or rule.min_torch <= options.target_torch
        )

    count = sum(
        1
        for r in results
        for d in r.diagnostics
        if d.fix == "unsafe" and not d.applied and takes(d.code)
    )
    if not count:
        return ""
    return (
        f"{count} unsafe fix{'es' if count != 1 else ''} available with --unsafe-fixes"
    )


@main.command("rules")
def rules_command() -> None:
    """List every rule: code, fix kind, minimum torch, name."""
    from codemod.rules import all_rules, format_version

    for rule in all_rules().values():
        since = format_version(rule.min_torch) if rule.min_torch else "-"
        click.echo(
            f"{rule.code}  {rule.fix.value:<6}  torch>={since:<5}  {rule.name}: {rule.message}"
        )


@main.command("explain")
@click.argument("code")
def explain_command(code: str) -> None:
    """Document the rule CODE: what it does, why, an example, and its fix safety."""
    from codemod.docs import render_rule
    from codemod.rules import all_rules

    rules = all_rules()
    rule = rules.get(code.strip().upper())
    if rule is None:
        close = [c for c in rules if c.startswith(code.strip().upper()[:3])]
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        click.echo(
            f"torchport: no rule {code!r}{hint}; see `torchport rules`", err=True
        )
        sys.exit(EXIT_ERROR)
    click.echo(render_rule(rule), nl=False)
