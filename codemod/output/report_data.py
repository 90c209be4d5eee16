"""The migration report's data: each file's sites (and the code around those left),
its diff and its ``# noqa`` comments, counted by family, state and folder.

Apart from the rendering (``report``) so that the Markdown and the HTML page show
the same numbers, collected once.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Dict, List, Sequence, Tuple

from codemod.model.diagnostic import Diagnostic
from codemod.output.findings import Problem, plural, problems_of
from codemod.run.job import WRITE

# Families of rule codes, in the order the report shows them.
FAMILIES: Dict[str, str] = {
    "TP1": "Device strings and torch.device",
    "TP2": "Tensor and module methods",
    "TP3": "torch.cuda runtime API",
    "TP4": "Mixed precision",
    "TP5": "Distributed",
    "TP6": "Backend flags",
    "TP9": "CUDA-only code",
}
# A site ends in one of these states; "informational" sites are reported but run
# everywhere as they stand (rule severity "info").
STATES = ("rewritten", "reported", "informational", "suppressed")
CONTEXT_LINES = 2  # lines of code shown above and below a remaining site


@dataclass
class Site:
    diagnostic: Diagnostic
    context: List[Tuple[int, str]] = field(default_factory=list)  # (line, text)

    @property
    def state(self) -> str:
        d = self.diagnostic
        if d.applied:
            return "rewritten"
        return "informational" if d.severity == "info" else "reported"


@dataclass
class FileReport:
    path: str
    changed: bool
    diff: str
    sites: List[Site]
    suppressed: Counter  # rule code -> `# noqa: CODE` comments

    @property
    def remaining(self) -> List[Site]:
        return [s for s in self.sites if s.state != "rewritten"]

    @property
    def folder(self) -> str:
        parent = PurePath(self.path).parent.as_posix()
        return parent if parent not in ("", ".") else "."


@dataclass
class ReportData:
    files: List[FileReport]
    scanned: int
    problems: List[Problem]
    written: bool  # True: the rewrite was made; False: a preview
    target_torch: str
    device_name: str

    def counts(self) -> Dict[str, Counter]:
        """Family -> state -> number of sites."""
        table: Dict[str, Counter] = {family: Counter() for family in FAMILIES}
        for f in self.files:
            for site in f.sites:
                table.setdefault(site.diagnostic.code[:3], Counter())[site.state] += 1
            for code, count in f.suppressed.items():
                table.setdefault(code[:3], Counter())["suppressed"] += count
        return {k: v for k, v in table.items() if sum(v.values())}

    def totals(self) -> Counter:
        total: Counter = Counter()
        for counter in self.counts().values():
            total.update(counter)
        return total

    def folders(self) -> List[dict]:
        """One row per folder, the most remaining work first."""
        rows: Dict[str, dict] = {}
        for f in self.files:
            row = rows.setdefault(
                f.folder,
                {
                    "folder": f.folder,
                    "files": 0,
                    "changed": 0,
                    **{s: 0 for s in STATES},
                },
            )
            row["files"] += 1
            row["changed"] += f.changed
            for site in f.sites:
                row[site.state] += 1
            row["suppressed"] += sum(f.suppressed.values())
        return sorted(
            rows.values(),
            key=lambda r: (-r["reported"], -r["informational"], r["folder"]),
        )

    def by_rule(self) -> Dict[str, List[Tuple[FileReport, Site]]]:
        """Rule code -> the remaining sites of that rule, in file order."""
        grouped: Dict[str, List[Tuple[FileReport, Site]]] = {}
        for f in self.files:
            for site in f.remaining:
                grouped.setdefault(site.diagnostic.code, []).append((f, site))
        return dict(sorted(grouped.items()))

    def summary_line(self) -> str:
        totals = self.totals()
        changed = sum(f.changed for f in self.files)
        verb = "rewrote" if self.written else "would rewrite"
        return (
            f"Report: {verb} {changed} of {plural(self.scanned, 'file')}"
            f" ({plural(totals['rewritten'], 'site')}); {totals['reported']} left to"
            f" review, {totals['informational']} informational,"
            f" {totals['suppressed']} suppressed; {plural(len(self.problems), 'error')}"
        )


# -- collecting ---------------------------------------------------------------------
def collect(results, errors: Sequence[str], mode: str, settings, before) -> ReportData:
    """The report's data from a run's results.

    ``before`` maps path -> original bytes when the run rewrote files (their diffs
    are made here); a preview run (diff mode) brings its own diffs.
    """
    from codemod.model.rule import format_version

    problems = [p for line in errors for p in problems_of(line.split(": ")[0], line)]
    problems += [p for r in results if r.error for p in problems_of(r.path, r.error)]
    files = []
    for result in results:
        text = _read(result.path)
        suppressed = _suppressed(result.path, text, settings)
        if not result.diagnostics and not suppressed and not result.changed:
            continue
        diff = _diff(result, text, before)
        lines = _Lines(result.path, text)
        sites = [
            Site(d, _context(lines.of(d.cell), d) if not d.applied else [])
            for d in result.diagnostics
        ]
        files.append(FileReport(result.path, result.changed, diff, sites, suppressed))
    return ReportData(
        files,
        len(results),
        problems,
        mode == WRITE,
        format_version(settings.options.target_torch),
        settings.options.device_name,
    )


def _diff(result, text: str, before) -> str:
    """The file's change: the run's diff (a preview), or the old bytes against
    the file (a rewrite); a notebook's as one diff of Python per changed cell."""
    from codemod.rewrite.linediff import unified_diff

    old = None
    if result.changed and before and result.path in before:
        old = _decode(before[result.path])
    if not result.path.endswith(".ipynb"):
        if result.diff or old is None:
            return result.diff
        return unified_diff(result.path, old, text)
    from codemod.output.notebook_diff import apply_diff, cell_diffs

    if old is not None:
        return cell_diffs(result.path, old, text)
    if result.diff:
        new = apply_diff(text, result.diff)
        return cell_diffs(result.path, text, new) if new is not None else result.diff
    return ""


def _read(path: str) -> str:
    try:
        return _decode(Path(path).read_bytes())
    except OSError:
        return ""


def _decode(data: bytes) -> str:
    return data.decode("utf-8-sig", errors="replace")


def _suppressed(path: str, text: str, settings) -> Counter:
    """The sites each ``# noqa`` comment suppresses, per code: real comments only
    (in a notebook, of its code cells), never the words in a string; a code that
    suppresses no site on its line, or names no enabled rule, counts nothing."""
    from codemod.output.noqa import (
        cell_sources,
        directives,
        sites_under_noqa,
        suppressed_here,
    )

    if path.endswith(".ipynb"):
        places = [
            (cell, d)
            for cell, source in cell_sources(text).items()
            for d in directives(source)
        ]
    else:
        places = [(None, d) for d in directives(text)]
    places = [
        (c, d)
        for c, d in places
        if not d.codes or any(x.startswith("TP") for x in d.codes)
    ]
    found: Counter = Counter()
    if not places:
        return found
    try:
        data = Path(path).read_bytes()
    except OSError:
        return found
    options = settings.options
    if settings.per_file is not None:
        options = settings.per_file(Path(path))
    sites = sites_under_noqa(Path(path), data, options)
    for cell, directive in places:
        found.update(suppressed_here(directive, sites.get((cell, directive.line), ())))
    return found


class _Lines:
    """A file's lines (a notebook's, per cell), split once for all its sites."""

    def __init__(self, path: str, text: str) -> None:
        self.path, self.text = path, text
        self.split: Dict[object, List[str]] = {}

    def of(self, cell) -> List[str]:
        if cell not in self.split:
            if cell is None:
                self.split[cell] = self.text.splitlines()
            else:
                from codemod.output.noqa import cell_sources

                cells = self.split.setdefault("cells", cell_sources(self.text))
                self.split[cell] = cells.get(cell, "").splitlines()
        return self.split[cell]


def _context(lines: List[str], d: Diagnostic) -> List[Tuple[int, str]]:
    """The lines around the site (in a notebook, of its cell)."""
    first = max(1, d.line - CONTEXT_LINES)
    last = min(len(lines), d.end_line + CONTEXT_LINES)
    return [(n, lines[n - 1]) for n in range(first, last + 1)]
