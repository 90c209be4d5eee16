"""The command line: parse options, call the engine, print. Nothing else lives here."""

from __future__ import annotations

import contextlib
import signal
import sys
from pathlib import Path
from typing import List, Optional, Sequence

import click

from codemod import __version__
from codemod.config import ConfigError, resolve_options
from codemod.diagnostics import RENDERERS
from codemod.engine import CHECK, DIFF, WRITE, FileResult, Job, discover, process_source, run

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class DefaultGroup(click.Group):
    """``torchport PATH...`` runs the rewrite; ``torchport rules`` is a subcommand."""

    def parse_args(self, ctx, args):
        if not args or args[0] not in self.commands:
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
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff; write nothing.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if anything would change or remains.")
@click.option("--select", help="Comma-separated rule codes or prefixes to enable (default: TP).")
@click.option("--ignore", help="Comma-separated rule codes or prefixes to disable.")
@click.option("--unsafe-fixes/--no-unsafe-fixes", default=None, help="Also apply fixes that need review.")
@click.option("--target-torch", help="Oldest torch release the code must run on, e.g. 2.6.")
@click.option("--device-name", help="Name of the module-level device binding (default DEVICE).")
@click.option("--output-format", type=click.Choice(sorted(RENDERERS)), default="text", show_default=True)
@click.option("--format/--no-format", "format_code", default=None, help="Black the changed lines (default on).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes (default: all cores).")
@click.option("--stdin-filename", help="The name to report for input read from '-'.")
@click.option("-q", "--quiet", is_flag=True, help="Print diagnostics only, no summary.")
def run_command(paths, show_diff, check, select, ignore, unsafe_fixes, target_torch,
                device_name, output_format, format_code, jobs, stdin_filename, quiet) -> None:
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
    try:
        settings = resolve_options(paths or ["."], flags)
    except ConfigError as error:
        click.echo(f"torchport: {error}", err=True)
        sys.exit(EXIT_ERROR)
    job = Job(mode, settings.options, settings.format)
    if list(paths) == ["-"]:
        sys.exit(_run_stdin(job, stdin_filename or "-", output_format, mode))
    if not paths:
        click.echo("torchport: no paths given (use '.' for this folder, '-' for stdin)", err=True)
        sys.exit(EXIT_ERROR)
    with _interruptible():
        files, errors = discover(paths, exclude=settings.exclude)
        results = run(files, job, jobs)
    sys.exit(_report(results, errors, output_format, mode, quiet))


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
        click.echo("torchport: interrupted; files not yet rewritten are untouched", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except SystemExit as stop:
        if stop.code == 128 + signal.SIGTERM:
            click.echo("torchport: terminated; files not yet rewritten are untouched", err=True)
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_stdin(job: Job, name: str, output_format: str, mode: str) -> int:
    data = sys.stdin.buffer.read()
    result = process_source(name, data, job, Path(name) if name != "-" else None)
    if mode == WRITE:
        sys.stdout.buffer.write(result.output if result.output is not None else data)
        sys.stdout.flush()
    elif mode == DIFF and result.diff:
        click.echo(result.diff, nl=False)
    shown = _shown(result.diagnostics, mode)
    stream = sys.stderr if mode == WRITE else sys.stdout
    if shown:
        stream.write(RENDERERS[output_format](shown))
    elif output_format == "json" and mode != WRITE:
        stream.write(RENDERERS["json"]([]))
    if result.error:
        click.echo(result.error, err=True)
        return EXIT_ERROR
    return EXIT_FINDINGS if _remaining(result.diagnostics) or (mode != WRITE and result.changed) else EXIT_CLEAN


def _shown(diagnostics, mode: str):
    """Write mode shows what is left; check and diff show every site."""
    return [d for d in diagnostics if mode != WRITE or not d.applied]


def _remaining(diagnostics) -> List:
    return [d for d in diagnostics if not d.applied]


def _report(results: Sequence[FileResult], errors: List[str], output_format: str,
            mode: str, quiet: bool) -> int:
    for result in results:
        if result.diff:
            click.echo(result.diff, nl=False)
    shown = [d for r in results for d in _shown(r.diagnostics, mode)]
    if shown or output_format == "json":
        click.echo(RENDERERS[output_format](shown), nl=False)
    errors = errors + [r.error for r in results if r.error]
    for line in errors:
        click.echo(line.replace("\r", "\\r").replace("\n", "\\n"), err=True)
    changed = [r for r in results if r.changed and not r.error]
    remaining = [d for r in results for d in _remaining(r.diagnostics)]
    if not quiet:
        verb = "Rewrote" if mode == WRITE else "Would rewrite"
        fixed = sum(d.applied for r in changed for d in r.diagnostics)
        click.echo(
            f"{verb} {len(changed)} of {len(results)} files ({fixed} sites);"
            f" {len(remaining)} sites left; {len(errors)} errors",
            err=True,
        )
    if errors:
        return EXIT_ERROR
    if remaining or (mode != WRITE and changed):
        return EXIT_FINDINGS
    return EXIT_CLEAN


@main.command("rules")
def rules_command() -> None:
    """List every rule: code, fix kind, minimum torch, name."""
    from codemod.rules import all_rules, format_version

    for rule in all_rules().values():
        since = format_version(rule.min_torch) if rule.min_torch else "-"
        click.echo(f"{rule.code}  {rule.fix.value:<6}  torch>={since:<5}  {rule.name}: {rule.message}")

