"""Whole programs in fixtures/programs/, written the way people write CUDA scripts.

Each ``<name>.before.py`` rewrites to its ``<name>.after.py`` without an internal error,
the after file is a fixed point, the expected diagnostics appear, and the after program
runs on CPU PyTorch and prints ``OK`` last. (``scripts/cuda_equivalence.py`` compares
before and after on a CUDA machine; ``scripts/torchtpu_check.py`` runs the after files
beside TorchTPU.)

Programs that do not get there today are listed in ``KNOWN_FAILURES``, the one place,
with the rule and site at fault. They are strict expected failures: fixing the pass
makes the test fail until the entry is removed and the program regenerated with
``python -m tests.update_fixtures programs/``.

``fixtures/programs/style/`` holds style goldens: their after files were written by
hand, reviewed line by line, and are what torchport should produce; where today's output
differs, ``STYLE_NOT_YET`` says what is wrong.
"""

from __future__ import annotations

from typing import Dict

import pytest

from codemod.rewrite.pipeline import RewriteError
from tests.fixture_cases import (
    PROGRAMS,
    after_of,
    diagnostics_of,
    program_files,
)
from tests.test_fixtures import _remaining, _rewrite

# name -> why its after file does not run on CPU today (rule, line of the after file).
RUNS_ON_CPU_FAILS: Dict[str, str] = {}
# name -> the internal error torchport hits on it today (the file is left untouched).
INTERNAL_ERRORS: Dict[str, str] = {}
# style golden -> what today's output gets wrong compared with the reviewed after file.
STYLE_NOT_YET: Dict[str, str] = {}

CASES = program_files()


def _name(before) -> str:
    relative = before.relative_to(PROGRAMS).as_posix()
    return relative[: -len(".before.py")]


def _expect(table: Dict[str, str], before, **xfail):
    """The program as a parameter, marked as a strict expected failure if listed."""
    name = _name(before)
    marks = (
        [pytest.mark.xfail(reason=table[name], strict=True, **xfail)]
        if name in table
        else []
    )
    return pytest.param(before, id=name, marks=marks)


def _params(*tables, **xfail):
    merged: Dict[str, str] = {}
    for table in tables:
        merged.update(table)
    return [_expect(merged, before, **xfail) for before in CASES]


@pytest.mark.parametrize(
    "before",
    _params(INTERNAL_ERRORS, STYLE_NOT_YET, raises=(RewriteError, AssertionError)),
)
def test_rewrites_to_after(before):
    result = _rewrite(before.read_text(encoding="utf-8"))
    assert result.code == after_of(before).read_text(encoding="utf-8")


@pytest.mark.parametrize("before", _params(INTERNAL_ERRORS, raises=RewriteError))
def test_no_internal_error(before):
    _rewrite(before.read_text(encoding="utf-8"))


@pytest.mark.parametrize("before", _params(INTERNAL_ERRORS, raises=RewriteError))
def test_after_is_a_fixed_point(before):
    after = after_of(before).read_text(encoding="utf-8")
    assert _rewrite(after).code == after


@pytest.mark.parametrize("before", _params(INTERNAL_ERRORS, raises=RewriteError))
def test_expected_diagnostics(before):
    expected_file = diagnostics_of(before)
    expected = (
        expected_file.read_text(encoding="utf-8") if expected_file.exists() else ""
    )
    assert _remaining(_rewrite(before.read_text(encoding="utf-8"))) == expected


@pytest.mark.parametrize("before", _params(RUNS_ON_CPU_FAILS))
def test_after_runs_on_cpu(before, tmp_path, program_runner):
    proc = program_runner.run(after_of(before), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines()[-1:] == ["OK"], proc.stdout[-2000:]


def test_known_failures_name_real_programs():
    names = {_name(before) for before in CASES}
    for table in (RUNS_ON_CPU_FAILS, INTERNAL_ERRORS, STYLE_NOT_YET):
        assert set(table) <= names, set(table) - names


def test_there_are_enough_programs():
    assert len([b for b in CASES if "/" not in _name(b)]) >= 30
    assert 4 <= len([b for b in CASES if _name(b).startswith("style/")]) <= 6
