"""Every unsafe fix torchport offers on the fixtures, applied (``--unsafe-fixes``),
gives a program that compiles and runs to completion on the CPU and on the simulated
accelerator: an unsafe fix may change what a program does, never make it raise on
the form it was offered for."""

from __future__ import annotations

import dataclasses

import black
import pytest

from codemod.rewrite.pipeline import rewrite_source
from tests.fixture_cases import before_files, case_id, options_of, program_files

pytestmark = pytest.mark.simulator
MODE = black.Mode()


def _with_unsafe_fixes():
    """(case, rewritten code, the unsafe fixes applied) for each fixture whose
    rewrite with --unsafe-fixes applies one."""
    found = []
    for before in before_files() + program_files():
        source = before.read_text(encoding="utf-8")
        options = dataclasses.replace(options_of(source), unsafe_fixes=True)
        result = rewrite_source(source, options, format_mode=MODE)
        applied = [
            f"{d.line}:{d.col} {d.code}"
            for d in result.diagnostics
            if d.fix == "unsafe" and d.applied
        ]
        if applied:
            found.append((case_id(before), result.code, applied))
    return found


def test_every_unsafe_fix_runs_on_the_cpu_and_on_tpsim(
    program_runner, simulated_runner, tmp_path
):
    cases = _with_unsafe_fixes()
    codes = {fix.split()[1] for _, _, applied in cases for fix in applied}
    # the fixtures offer unsafe fixes of every kind torchport has
    assert {"TP201", "TP303", "TP309", "TP314", "TP317", "TP604", "TP902"} <= codes
    failures = []
    for number, (case, code, applied) in enumerate(cases):
        compile(code, case, "exec")
        program = tmp_path / f"case_{number}.py"
        program.write_text(code, encoding="utf-8")
        for side, runner in (("cpu", program_runner), ("tpsim", simulated_runner)):
            cwd = tmp_path / f"{side}_{number}"
            cwd.mkdir()
            proc = runner.run(program, cwd=cwd)
            if proc.returncode != 0:
                error = (proc.stderr.strip().splitlines() or [""])[-1]
                failures.append(f"{case} ({', '.join(applied)}) on {side}: {error}")
    assert failures == []
