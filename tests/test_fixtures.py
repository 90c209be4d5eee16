"""Every fixture pair: before rewrites to after, after is a fixed point, the expected
diagnostics appear, and the after program runs to completion on CPU PyTorch."""

from __future__ import annotations

import functools

import black
import pytest

from codemod.output.text import render_text
from codemod.rewrite.pipeline import rewrite_source
from tests.fixture_cases import (
    after_of,
    before_files,
    case_id,
    diagnostics_of,
    options_of,
)

CASES = before_files()
MODE = black.Mode()


@functools.lru_cache(maxsize=None)  # two tests rewrite each before file
def _rewrite(source: str):
    return rewrite_source(source, options_of(source), format_mode=MODE)


def _remaining(rewrite) -> str:
    left = [d.at("") for d in rewrite.diagnostics if not d.applied]
    return "".join(line[1:] for line in render_text(left).splitlines(keepends=True))


@pytest.mark.parametrize("before", CASES, ids=case_id)
def test_before_rewrites_to_after(before):
    after = after_of(before)
    assert after.is_file(), f"{after} is missing"
    result = _rewrite(before.read_text(encoding="utf-8"))
    assert result.code == after.read_text(encoding="utf-8")


@pytest.mark.parametrize("before", CASES, ids=case_id)
def test_after_is_a_fixed_point(before):
    after = after_of(before).read_text(encoding="utf-8")
    assert _rewrite(after).code == after


@pytest.mark.parametrize("before", CASES, ids=case_id)
def test_expected_diagnostics(before):
    expected_file = diagnostics_of(before)
    expected = (
        expected_file.read_text(encoding="utf-8") if expected_file.exists() else ""
    )
    assert _remaining(_rewrite(before.read_text(encoding="utf-8"))) == expected


@pytest.mark.parametrize("before", CASES, ids=case_id)
def test_after_runs_on_cpu(before, tmp_path, program_runner):
    proc = program_runner.run(after_of(before), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_there_are_enough_fixtures():
    assert len(CASES) >= 30
