"""scripts/cuda_equivalence.py on this machine: its --allow-cpu mode, its summary line,
and its refusal to call a CPU-only run a CUDA check."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from tests.fixture_cases import ROOT

SCRIPT = ROOT / "scripts" / "cuda_equivalence.py"
PAIRS = {
    "alpha/same": ('print("x", 1)\nprint("OK")\n', 'print("x", 1)\nprint("OK")\n'),
    "alpha/differ": ('print("x", 1)\n', 'print("x", 2)\n'),
    "beta/after_fails": ('print("OK")\n', "raise SystemExit(3)\n"),
    "beta/both_fail": ("raise SystemExit(1)\n", "raise SystemExit(1)\n"),
}


@pytest.fixture()
def fixtures(tmp_path):
    for case, (before, after) in PAIRS.items():
        path = tmp_path / f"{case}.before.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(before, encoding="utf-8")
        path.with_name(path.name.replace(".before.", ".after.")).write_text(
            after, encoding="utf-8"
        )
    (tmp_path / "alpha" / "lonely.before.py").write_text("print(1)\n")  # no after
    return tmp_path


def _run(*args):
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_allow_cpu_counts_every_pair(fixtures):
    done = _run("--allow-cpu", "--fixtures", str(fixtures), "--timeout", "120")
    last = done.stdout.strip().splitlines()[-1]
    available = torch.cuda.is_available()
    assert last == (
        f"cuda-equivalence: 4 pairs, 1 same, 1 differ, 2 failed; "
        f"cuda available: {available}"
    )
    assert done.returncode == 1
    rows = [line for line in done.stdout.splitlines() if line.startswith("| alpha")]
    assert [row.split("|")[1].strip() for row in rows] == ["alpha/differ", "alpha/same"]


def test_all_same_exits_zero(fixtures):
    done = _run("--allow-cpu", "--fixtures", str(fixtures), "-k", "same")
    assert (
        done.stdout.strip()
        .splitlines()[-1]
        .startswith("cuda-equivalence: 1 pairs, 1 same, 0 differ, 0 failed;")
    )
    assert done.returncode == 0


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_refuses_without_cuda(fixtures):
    done = _run("--fixtures", str(fixtures))
    assert done.returncode == 2
    assert "needs a CUDA GPU" in done.stderr
    assert "cuda-equivalence:" not in done.stdout
