"""Workers die with their parent: after ``kill -9`` of torchport alone, nothing
keeps its stdout open (``$(torchport ...)`` returns)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.cli_helpers import ROOT

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc"
)

# Two workers that report their pid, then block on a file each, as a worker busy
# with a big file would be.
SCRIPT = """
import os, sys, time
from pathlib import Path
from codemod.run import pool
from codemod.run.job import CHECK, Job
from codemod.model.options import Options

folder = Path(sys.argv[1])

def busy(path):
    (folder / f"worker-{os.getpid()}").write_text("")
    while True:
        time.sleep(3600)

files = [folder / f"f{i}.py" for i in range(2)]
for path in files:
    path.write_text("import torch\\nx = torch.ones(1).cuda()\\n")
pool.run(files, Job(CHECK, Options(), False, per_file=busy), jobs=2)
"""

# Bounds on a hang, not on speed: each wait ends as soon as its event happens.
HANG = 120


def _wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + HANG
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.05)


def test_workers_die_when_the_parent_is_killed(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    parent = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    workers = []
    try:
        _wait_for(
            lambda: len(list(tmp_path.glob("worker-*"))) == 2, "the workers to start"
        )
        workers = [int(p.name.split("-")[1]) for p in tmp_path.glob("worker-*")]
        parent.kill()
        parent.wait()
        closed = threading.Event()

        def read_to_end() -> None:
            parent.stdout.read()  # returns once no process holds the pipe
            closed.set()

        threading.Thread(target=read_to_end, daemon=True).start()
        assert closed.wait(HANG), "a worker still holds the parent's stdout"
        _wait_for(lambda: not any(map(_alive, workers)), "the workers to exit")
    finally:
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")  # a zombie has exited, waiting to be reaped
