"""The command line: parse options, call the engine, print. Nothing else lives here."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import List, Optional, Sequence

import click

from codemod import __version__
from codemod.config.pyproject import ConfigError
from codemod.config.settings import resolve_options
from codemod.output.findings import Findings, edits_of, plural, problems_of
from codemod.output.formats import RENDERERS
from codemod.output.text import render_fixes
from codemod.model.diagnostic import fails
from codemod.model.options import Options
from codemod.model.text import printable, printable_path
from codemod.run.files import files_to_process
from codemod.run.job import CHECK, DIFF, WRITE, FileResult, Job
from codemod.run.pool import run
from codemod.run.prefilter import needs_parsing
from codemod.run.process import process_source

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, like a shell

# Words that name a subcommand. The older `rules` and `explain` give way to a file
# or folder of that name, so `torchport rules` still migrates a `rules/` package.
COMMANDS = ("check", "fix", "rule", "report")
YIELDING_COMMANDS = ("rules", "explain")


class DefaultGroup(click.Group):
    """``torchport PATH...`` rewrites (as ``torchport fix``); the rest are subcommands."""

    def parse_args(self, ctx, args):
        first = args[0] if args else None
        if first in ("--version", "-V", "-h", "--help"):
            return super().parse_args(ctx, args)
        if first in YIELDING_COMMANDS and os.path.exists(first):
            first = None  # a path the user wants to migrate
        if first not in (*COMMANDS, *YIELDING_COMMANDS):
            args = ["fix", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx, formatter):
        formatter.write_usage(
            "torchport", "[fix|check|report|rule] [OPTIONS] [PATH]..."
        )

    def list_commands(self, ctx):
        return [*COMMANDS, *YIELDING_COMMANDS]


@click.group(
    cls=DefaultGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="`torchport PATH...` is `torchport fix PATH...`. `torchport fix --help`"
    " lists the options. Exit codes: 0 nothing to do, 1 sites or changes found,"
    " 2 usage, configuration, parse or internal errors.",
)
@click.version_option(__version__, "-V", "--version", prog_name="torchport")
def main() -> None:
    """Rewrite CUDA-specific PyTorch code into device-portable code."""


def _codes_option(name: str, text: str):
    return click.option(
        name,
        multiple=True,
        metavar="CODES",
        help=text + " Comma-separated; repeat the option to add more.",
    )


def run_options(command):
    """The options shared by `fix`, `check` and `report`."""
    options = [
        _codes_option(
            "--select", "Rule codes or prefixes to enable (default: TP, all)."
        ),
        _codes_option("--extend-select", "Rule codes or prefixes to add to select."),
        _codes_option("--ignore", "Rule codes or prefixes to disable."),
        click.option(
            "--unsafe-fixes/--no-unsafe-fixes",
            default=None,
            help="Also apply fixes that need review.",
        ),
        click.option(
            "--target-torch",
            help="Oldest torch release the code must run on, e.g. 2.6.",
        ),
        click.option(
            "--device-name",
            help="Name of the module-level device binding (default DEVICE).",
        ),
        click.option(
            "--format/--no-format",
            "format_code",
            default=None,
            help="Black the changed lines (default on).",
        ),
        click.option(
            "-j",
            "--jobs",
            type=click.IntRange(min=1),
            help="Worker processes (default: all cores).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def output_options(command):
    options = [
        click.option(
            "--output-format",
            type=click.Choice(sorted(RENDERERS)),
            default="text",
            show_default=True,
            help="text, json (Ruff-shaped records), github (annotations) or sarif.",
        ),
        click.option(
            "--show-fixes", is_flag=True, help="List the sites rewritten in each file."
        ),
        click.option(
            "--stdin-filename",
            help="The name (and configuration) for input read from '-'.",
        ),
        click.option(
            "--statistics",
            is_flag=True,
            help="Print counts per rule and family instead of each site.",
        ),
        click.option(
            "--strict",
            is_flag=True,
            help="Informational sites (portable as they stand) fail too.",
        ),
        click.option(
            "--exit-zero",
            is_flag=True,
            help="Exit 0 even when sites remain or files would change (2 stays 2).",
        ),
        click.option(
            "--report",
            "report_file",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Also write a migration report (.md or .html).",
        ),
        click.option(
            "-q",
            "--quiet",
            is_flag=True,
            help="Print diagnostics only: no summary, no progress bar.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@main.command("fix")
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


@main.command("check")
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
    select,
    extend_select,
    ignore,
    unsafe_fixes,
    target_torch,
    device_name,
    format_code,
    jobs,
    output_format,
    show_fixes,
    stdin_filename,
    statistics,
    strict,
    exit_zero,
    report_file,
    quiet,
) -> None:
    flags = {
        "select": select,
        "extend-select": extend_select,
        "ignore": ignore,
        "unsafe-fixes": unsafe_fixes,
        "target-torch": target_torch,
        "device-name": device_name,
        "format": format_code,
    }
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


@dataclass(frozen=True)
class View:
    """How results are shown."""

    output_format: str
    mode: str
    quiet: bool = False
    show_fixes: bool = False
    statistics: bool = False
    options: Optional[Options] = None  # for the count of unsafe fixes left
    strict: bool = False  # informational sites fail too
    exit_zero: bool = False
    color: bool = False


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
    from codemod.model.options import ACCELERATOR_TORCH
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
    return _exit_code([result], findings.problems, view)


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
        return RENDERERS["text"](findings, color=view.color)
    if not findings.diagnostics and not findings.problems:
        if view.output_format == "github":
            return ""
    return RENDERERS[view.output_format](findings)


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
        click.echo(_summary(results, findings, view), err=True)
        hint = unsafe_hint(results, view.options)
        if hint:
            click.echo(hint, err=True)
    return _exit_code(results, findings.problems, view)


def _summary(results, findings: Findings, view: View) -> str:
    """``Rewrote 3 of 40 files (12 sites); 2 sites left (1 informational); 0 errors``."""
    changed = [r for r in results if r.changed and not r.error]
    left = [d for r in results for d in _remaining(r.diagnostics)]
    info = sum(1 for d in left if d.severity == "info")
    verb = "Rewrote" if view.mode == WRITE else "Would rewrite"
    fixed = sum(d.applied for r in changed for d in r.diagnostics)
    informational = f" ({info} informational)" if info else ""
    return (
        f"{verb} {len(changed)} of {plural(len(results), 'file')}"
        f" ({plural(fixed, 'site')}); {plural(len(left), 'site')} left{informational};"
        f" {plural(len(findings.problems), 'error')}"
    )


def _remaining(diagnostics) -> List:
    return [d for d in diagnostics if not d.applied]


def _exit_code(results, problems, view: View) -> int:
    """2 for errors; 1 when a site that fails is left, or (not writing) a file would
    change; else 0. ``--exit-zero`` turns 1 into 0."""
    if problems:
        return EXIT_ERROR
    failing = any(fails(d, view.strict) for r in results for d in r.diagnostics)
    changed = view.mode != WRITE and any(r.changed and not r.error for r in results)
    if (failing or changed) and not view.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def statistics_text(results: Sequence[FileResult]) -> str:
    """Counts per rule code, then one line: files scanned and changed, sites
    rewritten and reported, per family (TP1, TP2, ...)."""
    from collections import Counter

    rewritten: Counter = Counter()
    reported: Counter = Counter()
    names = {}
    severities = {}
    for result in results:
        for d in result.diagnostics:
            (rewritten if d.applied else reported)[d.code] += 1
            names[d.code] = d.name
            severities[d.code] = d.severity
    lines = []
    if names:
        lines.append(
            f"{'sites':>5}  {'code':<6} {'rewritten':>9} {'reported':>8}  rule"
        )
    for code in sorted(names):
        total = rewritten[code] + reported[code]
        info = " (info)" if severities[code] == "info" else ""
        lines.append(
            f"{total:>5}  {code:<6} {rewritten[code]:>9} {reported[code]:>8}"
            f"  {names[code]}{info}"
        )
    families = sorted({code[:3] for code in names})
    by_family = "; ".join(
        f"{family}: {sum(n for c, n in rewritten.items() if c.startswith(family))}"
        f" rewritten, {sum(n for c, n in reported.items() if c.startswith(family))}"
        " reported"
        for family in families
    )
    info = sum(n for c, n in reported.items() if severities[c] == "info")
    changed = sum(1 for r in results if r.changed and not r.error)
    lines.append(
        f"Scanned {plural(len(results), 'file')}, changed {changed};"
        f" {plural(sum(rewritten.values()), 'site')} rewritten,"
        f" {sum(reported.values())} reported"
        + (f", {info} of them informational" if info else "")
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
    count = sum(d.unsafe_available for r in results for d in r.diagnostics)
    if not count:
        return ""
    return (
        f"{plural(count, 'unsafe fix', 'unsafe fixes')} available with --unsafe-fixes"
    )


# -- rules --------------------------------------------------------------------------
def _rule_table() -> str:
    from codemod.model.rule import Fix, format_version
    from codemod.rules import all_rules

    lines = []
    for rule in all_rules().values():
        since = ""
        if rule.fix is not Fix.NONE:
            since = f"torch>={format_version(rule.min_torch)}" if rule.min_torch else ""
        lines.append(
            f"{rule.code}  {rule.fix.value:<6}  {rule.severity:<5}  {since:<11}"
            f"  {rule.name}: {rule.message}"
        )
    return "".join(line + "\n" for line in lines)


def _find_rule(word: str):
    """A rule by code (``TP201``, any case) or by name (``cuda-method``)."""
    from codemod.rules import all_rules

    rules = all_rules()
    key = word.strip()
    rule = rules.get(key.upper()) or next(
        (r for r in rules.values() if r.name == key.lower()), None
    )
    if rule is None:
        import difflib

        family = [c for c in rules if c.startswith(key.upper()[:3])]
        names = [r.name for r in rules.values()]
        close = family or difflib.get_close_matches(key, names, n=3, cutoff=0.6)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        click.echo(
            f"torchport: no rule {word!r}{hint}; see `torchport rule --all`", err=True
        )
        sys.exit(EXIT_ERROR)
    return rule


@main.command("rule")
@click.argument("rule", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
def rule_command(rule: Optional[str], show_all: bool) -> None:
    """Document RULE (a code such as TP201 or a name such as cuda-method)."""
    from codemod.output.docs import render_rule

    if show_all or rule is None:
        click.echo(_rule_table(), nl=False)
        return
    click.echo(render_rule(_find_rule(rule)), nl=False)


@main.command("rules")
def rules_command() -> None:
    """List every rule: code, fix kind, severity, minimum torch, name."""
    click.echo(_rule_table(), nl=False)


@main.command("explain")
@click.argument("rule")
def explain_command(rule: str) -> None:
    """Document RULE (a code or a name); the same as `torchport rule RULE`."""
    from codemod.output.docs import render_rule

    click.echo(render_rule(_find_rule(rule)), nl=False)


# -- report -------------------------------------------------------------------------
@main.command("report")
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
    flags = {
        "select": options["select"],
        "extend-select": options["extend_select"],
        "ignore": options["ignore"],
        "unsafe-fixes": options["unsafe_fixes"],
        "target-torch": options["target_torch"],
        "device-name": options["device_name"],
        "format": options["format_code"],
    }
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
