"""The migration workflow around ``# noqa``, as with Ruff: ``--add-noqa`` writes a
``# noqa: CODE`` on each line whose sites would fail a check (a baseline: CI turns
green, and the comments are burnt down later), and ``--unused-noqa`` reports the
torchport codes of ``# noqa`` comments that suppress nothing (TP000).

Which sites a ``# noqa`` suppresses is found by processing the file once more
with its ``noqa`` comments made inert (the word changed, every position kept):
the sites then found on a comment's line are the ones it suppresses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import click

from codemod.cli.summary import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS
from codemod.model.diagnostic import Diagnostic, fails
from codemod.output import noqa
from codemod.output.findings import plural, visible
from codemod.run.io import (
    FileChangedError,
    NotRegularError,
    decode,
    os_reason,
    read_regular,
    write_atomic,
)
from codemod.run.job import CHECK, FileResult, Job
from codemod.run.pool import run

_INERT = noqa.INERT


# -- --add-noqa -------------------------------------------------------------------
def add_noqa(files, groups, errors: List[str], view, jobs) -> int:
    """Add ``# noqa`` comments for what a check of ``files`` finds; exit code."""
    results: List[Optional[FileResult]] = [None] * len(files)
    for settings, indices in groups:
        job = Job(CHECK, settings.options, False, settings.per_file)
        for index, result in zip(indices, run([files[i] for i in indices], job, jobs)):
            results[index] = result
    added = 0
    stuck: List[str] = []
    for path, result in zip(files, results):
        if result is None or result.error:
            errors += [result.error] if result is not None and result.error else []
            continue
        wanted = _wanted(result.diagnostics, view.strict)
        if wanted:
            count, problem = _baseline(Path(path), wanted, stuck)
            added += count
            errors += [problem] if problem else []
    for line in errors:
        click.echo(visible(line), err=True)
    for line in stuck:
        click.echo(visible(line), err=True)
    click.echo(f"Added {plural(added, 'noqa directive')}.", err=True)
    if errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if stuck and not view.exit_zero else EXIT_CLEAN


def _wanted(diagnostics, strict: bool) -> Dict[Tuple[Optional[int], int], List[str]]:
    """(cell, line) -> the codes to suppress there: every site that fails a check
    (one whose fix applies makes the file change, which fails it too)."""
    wanted: Dict[Tuple[Optional[int], int], List[str]] = {}
    for d in diagnostics:
        if d.applied or fails(d, strict):
            codes = wanted.setdefault((d.cell, d.line), [])
            if d.code not in codes:
                codes.append(d.code)
    return wanted


def _baseline(path: Path, wanted, stuck: List[str]) -> Tuple[int, Optional[str]]:
    """Write the comments into ``path``: (directives added, error line or None)."""
    try:
        data, before = read_regular(path)
    except (OSError, NotRegularError) as error:
        return 0, f"{path}: cannot read: {getattr(error, 'strerror', None) or error}"
    if path.suffix == ".ipynb":
        new, count = _notebook(path, data, wanted, stuck)
    else:
        new, count = _module(path, data, wanted, stuck)
    if new is None or new == data:
        return 0, None
    try:
        write_atomic(path, new, data, before)
    except FileChangedError:
        return 0, f"{path}: changed while torchport was running; not written"
    except OSError as error:
        return 0, f"{path}: cannot write: {os_reason(error)}"
    return count, None


def _module(path, data: bytes, wanted, stuck) -> Tuple[Optional[bytes], int]:
    try:
        source, encoding = decode(data)
    except UnicodeError:
        return None, 0
    text, count = _commented(str(path), None, source, wanted, stuck)
    try:
        compile(text, str(path), "exec", dont_inherit=True, flags=0x400)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        stuck.append(f"{path}: the comments would not parse; not written")
        return None, 0
    return text.encode(encoding), count


def _notebook(path, data: bytes, wanted, stuck) -> Tuple[Optional[bytes], int]:
    from codemod.run.notebook_json import source_spans, with_sources

    text = data.decode("utf-8-sig")
    sources = noqa.cell_sources(text)
    changed: Dict[int, str] = {}
    count = 0
    for cell in sorted({c for c, _ in wanted if c is not None}):
        if cell not in sources:
            continue
        mine = {(None, line): codes for (c, line), codes in wanted.items() if c == cell}
        new, added = _commented(f"{path}:cell {cell}", cell, sources[cell], mine, stuck)
        if added:
            changed[cell - 1] = new
            count += added
    if not changed:
        return None, 0
    new_text = with_sources(text, list(source_spans(text)), changed)
    bom = "\ufeff" if data.startswith(b"\xef\xbb\xbf") else ""
    return (bom + new_text).encode("utf-8"), count


def _commented(where: str, cell, source: str, wanted, stuck) -> Tuple[str, int]:
    lines = source.splitlines(keepends=True)
    scanned = noqa.scan(source)
    count = 0
    for (_, number), codes in sorted(wanted.items(), key=lambda item: item[0][1]):
        if scanned is None or number in scanned.blocked or number > len(lines):
            stuck.append(
                f"{where}:{number}: no comment can go on this line (it ends inside a"
                f" string or a continuation); {', '.join(codes)} left as it is"
            )
            continue
        lines[number - 1] = noqa.with_codes(
            lines[number - 1], scanned.comments.get(number), codes
        )
        count += 1
    return "".join(lines), count


# -- --unused-noqa ----------------------------------------------------------------
def unused_directives(files, groups, results: Sequence[FileResult]) -> List[Diagnostic]:
    """A TP000 diagnostic for each torchport code of a ``# noqa`` comment in
    ``files`` that suppresses no site (files as they are now: after a rewrite)."""
    from codemod.rules import all_rules

    known = sorted(all_rules())
    found: List[Diagnostic] = []
    for settings, indices in groups:
        for index in indices:
            path, result = Path(files[index]), results[index]
            if result.error:
                continue
            options = settings.per_file(path) if settings.per_file else settings.options
            found += _unused_in(path, options, known)
    return found


def _unused_in(path: Path, options, known) -> List[Diagnostic]:
    try:
        data, _ = read_regular(path)
    except (OSError, NotRegularError):
        return []
    if not _INERT.search(data):
        return []
    text = data.decode("utf-8-sig", errors="replace")
    if path.suffix == ".ipynb":
        places = [
            (cell, d)
            for cell, source in noqa.cell_sources(text).items()
            for d in noqa.directives(source)
        ]
    else:
        places = [(None, d) for d in noqa.directives(text)]
    places = [(c, d) for c, d in places if any(x.startswith("TP") for x in d.codes)]
    if not places:
        return []
    sites = noqa.sites_under_noqa(path, data, options)
    enabled = options.selection.enabled
    out = []
    for cell, directive in places:
        here = sites.get((cell, directive.line), set())
        unused = noqa.unused_codes(directive, here, enabled, known)
        if unused:
            out.append(
                Diagnostic(
                    str(path),
                    directive.line,
                    directive.col,
                    noqa.UNUSED_NOQA,
                    noqa.UNUSED_NOQA_NAME,
                    f"unused `noqa` directive ({'; '.join(unused)})",
                    "none",
                    cell=cell,
                )
            )
    return out
