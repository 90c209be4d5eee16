"""What a run ends with: the summary line, the hints about unsafe fixes and about
one shared device binding, and the exit code.

Apart from the commands so that the counts a run reports, and the exit code they
give, are decided in one place for files, stdin and every output format.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from codemod.model.diagnostic import fails
from codemod.model.rule import format_version
from codemod.model.options import Options
from codemod.model.text import printable
from codemod.output.findings import Findings, plural
from codemod.run.job import DIFF, WRITE, FileResult

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, like a shell


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
    # (folder, files in it) for each folder a default exclude (dist/...) skipped
    skipped_by_default: Sequence = ()


def summary_line(results, findings: Findings, view: View, extra=()) -> str:
    """``Rewrote 3 of 40 files (12 sites); 2 sites left (1 informational); 0 errors``."""
    changed = [r for r in results if r.changed and not r.error]
    left = [d for r in results for d in _remaining(r.diagnostics)] + list(extra)
    info = sum(1 for d in left if d.severity == "info")
    verb = "Rewrote" if view.mode == WRITE else "Would rewrite"
    fixed = sum(d.applied for r in changed for d in r.diagnostics)
    informational = f" ({info} informational)" if info else ""
    return (
        f"{verb} {len(changed)} of {plural(len(results), 'file')}"
        f" ({plural(fixed, 'site')}); {plural(len(left), 'site')} left{informational};"
        f" {plural(len(findings.problems), 'error')}{_skipped(view.skipped_by_default)}"
    )


def _skipped(folders) -> str:
    """How many files the default excludes skipped, and where (the first few)."""
    count = sum(files for _, files in folders)
    if not count:
        return ""
    shown = ", ".join(printable(f"{folder}{os.sep}") for folder, _ in folders[:3])
    more = f" and {len(folders) - 3} more" if len(folders) > 3 else ""
    return (
        f"; {plural(count, 'file')} in {shown}{more} skipped by the default"
        " excludes (name a folder to process it)"
    )


def _remaining(diagnostics) -> List:
    return [d for d in diagnostics if not d.applied]


def exit_code(results, problems, view: View, extra=()) -> int:
    """2 for errors; 1 when a site that fails is left, or (not writing) a file would
    change; else 0. ``--exit-zero`` turns 1 into 0."""
    if problems:
        return EXIT_ERROR
    failing = any(fails(d, view.strict) for r in results for d in r.diagnostics)
    failing = failing or any(fails(d, view.strict) for d in extra)
    changed = view.mode != WRITE and any(r.changed and not r.error for r in results)
    if (failing or changed) and not view.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


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


def floor_hint(results: Sequence[FileResult], options) -> str:
    """How many sites the target torch (a declared floor) keeps CUDA-only, and the
    floor that would port them: '' when there are none."""
    needs = [d.needs_torch for r in results for d in r.diagnostics if d.needs_torch]
    if options is None or not needs:
        return ""
    lowest, highest = min(needs), max(needs)
    ports = (
        f"torch >= {format_version(highest)} would port"
        f" {'it' if len(needs) == 1 else 'them'}"
        if lowest == highest
        else f"torch >= {format_version(lowest)} would port"
        f" {sum(n == lowest for n in needs)} of them,"
        f" >= {format_version(highest)} all"
    )
    return (
        f"{plural(len(needs), 'site')} kept CUDA-only by the target torch"
        f" {format_version(options.target_torch)}: {ports}"
        f" (raise the floor, or --target-torch {format_version(highest)})"
    )


def next_steps(results: Sequence[FileResult], view: View, extra=()) -> List[str]:
    """What a run that wrote nothing leaves the user to do, as Ruff says it:
    ``3 fixable with `torchport fix```; and under ``--diff``, whose standard output
    holds the diff alone, why it exits 1 with sites the diff does not carry."""
    if view.mode == WRITE:
        return []
    lines = []
    fixable = sum(d.applied for r in results if not r.error for d in r.diagnostics)
    if fixable and view.mode != DIFF:
        lines.append(f"{fixable} fixable with `torchport fix`")
    left = [d for r in results for d in r.diagnostics if fails(d, view.strict)]
    left += [d for d in extra if fails(d, view.strict)]
    if left and view.mode == DIFF:
        lines.append(
            f"{plural(len(left), 'site')} that no fix rewrites"
            f" {'is' if len(left) == 1 else 'are'} not in the diff and fail"
            f"{'s' if len(left) == 1 else ''} the check (exit 1):"
            " `torchport check` lists them"
        )
    return lines


def shared_binding_hints(results: Sequence[FileResult], view: View) -> List[str]:
    """One line per package of which several modules get an accessor of their own
    in this run: how ``device-import`` gives them one shared binding instead."""
    if view.options is None or view.options.device_import:
        return []
    packages: Dict[str, List[str]] = {}
    for result in results:
        if result.adds_accessor and not result.error:
            package = _package_of(result.path)
            if package is not None:
                packages.setdefault(package, []).append(result.path)
    name = view.options.device_name
    verb = "got" if view.mode == WRITE else "get"
    lines = []
    for package, paths in sorted(packages.items()):
        if len(paths) < 2:
            continue
        shown = ", ".join(printable(p) for p in sorted(paths)[:2])
        more = f" and {len(paths) - 2} more" if len(paths) > 2 else ""
        top = Path(package).name
        module = "device" if not (Path(package) / "device.py").exists() else "MODULE"
        lines.append(
            f"{len(paths)} modules of package {printable(top)} ({shown}{more}) {verb}"
            f" a device accessor each; to share one binding, define `{name}()` once"
            f" in {printable(top)}/{module}.py and set device-import ="
            f' "from {printable(top)}.{module} import {name}" under [tool.torchport]:'
            " torchport then imports it wherever the device is needed"
        )
    return lines


def _package_of(path: str) -> Optional[str]:
    """The folder of the outermost package that holds the module ``path`` (folders
    with an ``__init__.py`` up from it); None for a module of no package."""
    folder = Path(path).resolve().parent
    package = None
    while (folder / "__init__.py").is_file():
        package = folder
        if folder.parent == folder:
            break
        folder = folder.parent
    return None if package is None else str(package)
