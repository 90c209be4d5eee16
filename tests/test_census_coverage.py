"""Every CUDA-specific site left in a fixture's output carries a diagnostic.

The census (``scripts/census.py``, stdlib ``ast`` only) finds CUDA-specific sites
independently of the passes. A site it still finds in an after file must be reported
on its line (DESIGN §1.7: rewritten, reported, or suppressed; never silently left).
Two views:
- the after file, run again: each site's line has a diagnostic of that run (as
  ``scripts/realcode_check.py`` counts "silent" sites);
- the before file, rewritten: each site in the output has a diagnostic of that run
  within the same statement (black may have split the statement over lines).
Census kinds that are portable on their own (``dataloader-pin``) are exempt, and so
are lines with a ``# noqa`` (the user's own decision).

Sites that belong to a pass this checkout does not have yet (the torch.cuda runtime
pass) are skipped while its module is absent, so the test turns strict for them as
soon as the pass lands.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
import sys
from typing import Dict, List, Tuple

import pytest

from tests.fixture_cases import ROOT, after_of, before_files, case_id
from tests.test_fixtures import _rewrite

CENSUS = ROOT / "scripts" / "census.py"
PORTABLE_KINDS = {"dataloader-pin"}

pytestmark = pytest.mark.skipif(
    not CENSUS.is_file(),
    reason="scripts/census.py is not in this checkout (it comes with the realcode branch)",
)
CASES = before_files()
NOQA = re.compile(r"#\s*noqa", re.IGNORECASE)
# The torch.cuda runtime pass owns these (codemod/passes/runtime/).
RUNTIME_PASS = ROOT / "codemod" / "passes" / "runtime" / "dispatch.py"
RUNTIME_SITES = re.compile(
    r"torch\.cuda\.(is_available|device_count|set_device|current_device|synchronize"
    r"|Stream|stream|current_stream|default_stream|Event|empty_cache|mem_get_info"
    r"|(max_)?memory_\w+|reset_\w+|manual_seed\w*|seed\w*|initial_seed"
    r"|get_rng_state\w*|set_rng_state\w*|get_device_properties|get_device_name"
    r"|device|ipc_collect|set_per_process_memory_fraction)$"
)
# Where the census and a pass disagree on purpose: case -> why. Strict: once the
# disagreement is settled the case passes and must come off this list.
KNOWN: Dict[str, str] = {}


@functools.lru_cache(maxsize=None)
def _census():
    spec = importlib.util.spec_from_file_location("torchport_census", CENSUS)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _sites(source: str) -> List[Tuple[int, str]]:
    lines = source.splitlines()
    pending = not RUNTIME_PASS.is_file()
    return [
        (s.line, f"{s.line}:{s.col}: {s.kind} {s.snippet}")
        for s in _census().census_source(source)
        if s.kind not in PORTABLE_KINDS
        and not NOQA.search(lines[s.line - 1])
        and not (pending and s.kind == "torch.cuda" and RUNTIME_SITES.match(s.snippet))
    ]


def _left(rewrite) -> List[int]:
    return sorted({d.line for d in rewrite.diagnostics if not d.applied})


def _statement_lines(source: str) -> Dict[int, range]:
    """Line -> the lines of the innermost statement on it (a compound statement's
    header only)."""
    spans: Dict[int, range] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.stmt):
            continue
        body = getattr(node, "body", None)
        end = body[0].lineno - 1 if isinstance(body, list) and body else node.end_lineno
        span = range(node.lineno, max(end, node.lineno) + 1)
        for line in span:
            if line not in spans or len(span) < len(spans[line]):
                spans[line] = span
    return spans


def _check(case: str, silent: List[str]) -> None:
    if case in KNOWN:
        assert silent, f"{case} is reported in full now: take it off KNOWN"
        pytest.xfail(KNOWN[case])
    assert not silent, "census sites without a diagnostic:\n" + "\n".join(silent)


@pytest.mark.parametrize("before", CASES, ids=case_id)
def test_after_file_sites_are_reported(before):
    after = after_of(before).read_text(encoding="utf-8")
    lines = set(_left(_rewrite(after)))
    silent = [site for line, site in _sites(after) if line not in lines]
    _check(case_id(before), silent)


@pytest.mark.parametrize("before", CASES, ids=case_id)
def test_rewritten_before_file_sites_are_reported(before):
    rewrite = _rewrite(before.read_text(encoding="utf-8"))
    lines = set(_left(rewrite))
    spans = _statement_lines(rewrite.code)
    silent = [
        site
        for line, site in _sites(rewrite.code)
        if not lines.intersection(spans.get(line, (line,)))
    ]
    _check(case_id(before), silent)
