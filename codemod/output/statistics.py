"""``--statistics``: the sites counted per rule, then per family, as a table
(``text``) or as records (``json``, shaped like Ruff's ``--statistics`` JSON).

The words follow what the run did: "rewritten" only when files were written,
"to rewrite" when nothing was (``check``, ``--diff``).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Dict, List, Sequence

from codemod.output.findings import plural
from codemod.run.job import WRITE


def _counts(results, extra=()):
    fixes: Counter = Counter()  # sites whose fix applies with the options given
    reported: Counter = Counter()
    names: Dict[str, str] = {}
    severities: Dict[str, str] = {}
    diagnostics = [d for r in results for d in r.diagnostics] + list(extra)
    for d in diagnostics:
        (fixes if d.applied else reported)[d.code] += 1
        names[d.code] = d.name
        severities[d.code] = d.severity
    return fixes, reported, names, severities


def statistics_records(results, mode: str, extra=()) -> List[dict]:
    """One record per rule code: Ruff's ``code``, ``name``, ``count`` and
    ``fixable``, and torchport's ``severity``, ``fix_applies`` (sites a fix run
    rewrites with these options), ``rewritten`` (sites this run wrote: 0 unless it
    wrote files) and ``left`` (sites left as they are)."""
    fixes, reported, names, severities = _counts(results, extra)
    written = mode == WRITE
    return [
        {
            "code": code,
            "name": names[code],
            "severity": severities[code],
            "count": fixes[code] + reported[code],
            "fixable": fixes[code] > 0,
            "fix_applies": fixes[code],
            "rewritten": fixes[code] if written else 0,
            "left": reported[code],
        }
        for code in sorted(names)
    ]


def render_statistics(
    results: Sequence, output_format: str, mode: str, extra=()
) -> str:
    if output_format == "json":
        return json.dumps(statistics_records(results, mode, extra), indent=2) + "\n"
    return statistics_text(results, mode, extra)


def statistics_text(results: Sequence, mode: str = WRITE, extra=()) -> str:
    """Counts per rule code, then one line: files scanned and changed, sites
    rewritten (or to rewrite) and reported, per family (TP1, TP2, ...)."""
    fixes, reported, names, severities = _counts(results, extra)
    done = "rewritten" if mode == WRITE else "to rewrite"
    width = len(done)
    lines = []
    if names:
        lines.append(f"{'sites':>5}  {'code':<6} {done:>{width}} {'reported':>8}  rule")
    for code in sorted(names):
        total = fixes[code] + reported[code]
        info = " (info)" if severities[code] == "info" else ""
        lines.append(
            f"{total:>5}  {code:<6} {fixes[code]:>{width}} {reported[code]:>8}"
            f"  {names[code]}{info}"
        )
    families = sorted({code[:3] for code in names})
    by_family = "; ".join(
        f"{family}: {sum(n for c, n in fixes.items() if c.startswith(family))}"
        f" {done}, {sum(n for c, n in reported.items() if c.startswith(family))}"
        " reported"
        for family in families
    )
    info = sum(n for c, n in reported.items() if severities[c] == "info")
    changed = sum(1 for r in results if r.changed and not r.error)
    verb = "changed" if mode == WRITE else "would change"
    lines.append(
        f"Scanned {plural(len(results), 'file')}, {verb} {changed};"
        f" {plural(sum(fixes.values()), 'site')} {done},"
        f" {sum(reported.values())} reported"
        + (f", {info} of them informational" if info else "")
        + (f" ({by_family})" if by_family else "")
    )
    return "".join(line + "\n" for line in lines)
