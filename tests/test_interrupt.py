"""Killing torchport in the middle of a run never leaves a half-written file.

400 CUDA files are rewritten with two workers, one file of which a worker never
finishes (so the run cannot end first, however fast it is); once some files are
written and that worker is stuck, the run is interrupted. Every file must then be its
exact original or its exact rewrite.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codemod.run import process
from codemod.run.io import TEMP_SUFFIX, write_atomic
from codemod.run.job import WRITE, Job
from codemod.model.options import Options
from tests.cli_helpers import ROOT

FILES = 400
# Limits on waits guard against hangs only; none of them measures speed.
HANG_GUARD_S = 600
TEMPLATE = """import torch
import torch.nn as nn

model = nn.Linear(4, 2).cuda()
data = torch.randn(8, 4).cuda()
pinned = torch.randn(8, 4).pin_memory()
on_gpu = data.is_cuda
device = "cuda" if torch.cuda.is_available() else "cpu"
out = model(data.to("cuda:0"))
print(out.sum().item(), on_gpu, device)
marker = 0  # file 0
"""


def _expected() -> bytes:
    job = Job(WRITE, Options(), True)
    result = process.process_source("f.py", TEMPLATE.encode(), job, None)
    assert result.changed and result.error is None
    return result.output


def _make_tree(root: Path):
    for i in range(FILES):
        (root / f"f{i:03d}.py").write_text(TEMPLATE.replace("# file 0", f"# file {i}"))


def _state(root: Path, rewrite: bytes):
    """Names of rewritten files; fails on any file that is neither version."""
    rewritten = []
    for i in range(FILES):
        data = (root / f"f{i:03d}.py").read_bytes()
        original = TEMPLATE.replace("# file 0", f"# file {i}").encode()
        if data == rewrite.replace(b"# file 0", f"# file {i}".encode()):
            rewritten.append(i)
        else:
            assert data == original, f"f{i:03d}.py is neither original nor rewrite"
    return rewritten


# torchport as its command line runs it, except that the worker given BLOCKED never
# finishes it: the run cannot end before the test's signal, however fast it is.
# The worker says so first by creating the file named in $TORCHPORT_TEST_BLOCKED.
BLOCKED = "f200.py"
SCRIPT = f"""
import os, sys, time
from pathlib import Path
from codemod.run import process
real = process.process_file
def process_file(path, job):
    if Path(path).name == {BLOCKED!r}:
        Path(os.environ["TORCHPORT_TEST_BLOCKED"]).write_text("")
        while True:
            time.sleep(3600)
    return real(path, job)
process.process_file = process_file
from codemod.cli import main
sys.argv[0] = "torchport"
main()
"""


def _start(root: Path, marker: Path) -> subprocess.Popen:
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        PYTHONIOENCODING="utf-8",
        TORCHPORT_TEST_BLOCKED=str(marker),
    )
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, "--jobs", "2", str(root)],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as under a terminal
        preexec_fn=_as_in_a_terminal,
    )


def _as_in_a_terminal() -> None:
    """Ctrl-C and SIGTERM act as in a terminal, even where the tests run with them
    ignored (a shell's background job ignores SIGINT, and a child inherits that)."""
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)


def _wait_for_writes(proc, root: Path) -> None:
    """Return once a few files are rewritten on disk (the run is writing)."""
    probes = [root / f"f{i:03d}.py" for i in range(0, FILES, 7)]
    guard = time.monotonic() + HANG_GUARD_S
    while sum(b"DEVICE" in probe.read_bytes() for probe in probes) < 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < guard, "torchport wrote nothing (hang guard)"
        time.sleep(0.02)


def _wait_until_blocked(proc, marker: Path) -> None:
    """Return once some files are rewritten and a worker holds BLOCKED."""
    guard = time.monotonic() + HANG_GUARD_S
    while not marker.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < guard, "no worker reached the file (hang guard)"
        time.sleep(0.02)


def _live_members(pgid: int) -> list:
    """Processes of group ``pgid`` that are not zombies (a zombie runs nothing)."""
    if not os.path.isdir("/proc/self"):  # no procfs: signal 0 tells only "exists"
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        return [pgid]
    members = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except (OSError, ValueError):
            continue  # not a process, or it has just gone
        fields = stat[stat.rindex(b")") + 2 :].split()
        state, group = fields[0], int(fields[2])
        if group == pgid and state not in (b"Z", b"X"):
            members.append(int(entry))
    return members


def _wait_until_group_gone(pgid: int) -> None:
    """Wait for every process torchport started to end; fails only after the guard."""
    guard = time.monotonic() + HANG_GUARD_S
    while _live_members(pgid):
        assert time.monotonic() < guard, "worker processes survived (hang guard)"
        time.sleep(0.05)


def _leftovers(root: Path):
    expected = {f"f{i:03d}.py" for i in range(FILES)}
    return sorted(p.name for p in root.iterdir() if p.name not in expected)


def _run_until_blocked(root: Path, marker: Path) -> subprocess.Popen:
    """torchport on a fresh tree in ``root``, once it is mid-run for certain: some
    files rewritten, and a worker stuck on BLOCKED."""
    root.mkdir()
    _make_tree(root)
    proc = _start(root, marker)
    _wait_for_writes(proc, root)
    _wait_until_blocked(proc, marker)
    return proc


@pytest.mark.parametrize("to_group", [True, False], ids=["ctrl-c", "kill-parent"])
def test_sigint_mid_run(tmp_path, to_group):
    rewrite = _expected()
    root = tmp_path / "tree"
    proc = _run_until_blocked(root, tmp_path / "blocked")
    if to_group:  # what a terminal does on Ctrl-C
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=HANG_GUARD_S)
    stderr = stderr.decode()
    assert proc.returncode == 130, stderr
    assert "torchport: interrupted" in stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    _wait_until_group_gone(proc.pid)
    rewritten = _state(root, rewrite)
    assert 0 < len(rewritten) < FILES  # it really was stopped in the middle
    assert _leftovers(root) == []  # no temporary file left behind


def test_sigkill_mid_run(tmp_path):
    rewrite = _expected()
    root = tmp_path / "tree"
    proc = _run_until_blocked(root, tmp_path / "blocked")
    os.killpg(proc.pid, signal.SIGKILL)  # parent and workers, as the OOM killer might
    proc.communicate(timeout=HANG_GUARD_S)
    _wait_until_group_gone(proc.pid)
    rewritten = _state(root, rewrite)
    assert 0 < len(rewritten) < FILES
    # A temporary file may survive SIGKILL: hidden, and never a .py a user commits.
    for name in _leftovers(root):
        assert name.startswith(".") and name.endswith(TEMP_SUFFIX), name
        assert not name.endswith(".py")


def test_interrupted_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    """An exception while the new bytes are written removes the temporary file."""
    target = tmp_path / "t.py"
    target.write_bytes(b"old")
    before = os.stat(target)

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, b"new", b"old", before)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.py"]
    assert target.read_bytes() == b"old"
