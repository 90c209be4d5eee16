"""Messages for bad settings and stops: one line each, naming what is wrong."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.cli_helpers import ROOT, run_cli

CUDA = "import torch\n\nx = torch.ones(2).cuda()\n"


@pytest.mark.parametrize(
    "setting, message",
    [
        (
            'target-version = ["py99"]',
            "[tool.black] target-version: unknown version 'py99' (known: py33,",
        ),
        ("line-length = 0", "[tool.black] line-length must be a positive integer: 0"),
        (
            'preview = "yes"',
            "[tool.black] preview must be true or false: 'yes'",
        ),
    ],
    ids=["target-version", "line-length", "preview"],
)
def test_bad_black_setting_is_one_config_error(tmp_path, setting, message):
    (tmp_path / "pyproject.toml").write_text(f"[tool.black]\n{setting}\n")
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(CUDA)
    proc = run_cli(["."], cwd=tmp_path)
    assert proc.returncode == 2
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"torchport: {tmp_path / 'pyproject.toml'}: {message}")
    assert (tmp_path / "a.py").read_text() == CUDA  # nothing done with a bad setting


def test_bad_black_setting_does_not_matter_without_formatting(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.black]\ntarget-version = ["py99"]\n'
    )
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["--no-format", "."], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ".to(_DEVICE())" in (tmp_path / "a.py").read_text()


# A worker stopped right after it was forked, before its own signal handlers are
# set (the run was interrupted at that moment): it inherited the command line's
# SIGTERM handler, which raises, and printed a traceback.
EARLY_STOP = """
import os, signal, sys
from pathlib import Path
from codemod.run import pool
from codemod.run.job import CHECK, Job
from codemod.model.options import Options

real = pool._init_worker

def stopped_at_once(parent):
    os.kill(os.getpid(), signal.SIGTERM)
    real(parent)

pool._init_worker = stopped_at_once

def terminated(signum, frame):  # as the command line stops on SIGTERM
    raise SystemExit(128 + signum)

signal.signal(signal.SIGTERM, terminated)
files = [Path(sys.argv[1]) / f"f{i}.py" for i in range(4)]
for path in files:
    path.write_text("import torch\\nx = torch.ones(1).cuda()\\n")
results = pool.run(files, Job(CHECK, Options(), False), jobs=2)
print(sum(1 for r in results if r.error))
"""


def test_worker_stopped_before_its_handlers_are_set_prints_no_traceback(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", EARLY_STOP, str(tmp_path)],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0 and proc.stdout.strip() == "4", proc.stderr
