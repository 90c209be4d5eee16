"""No ``.torchport~`` file is left behind but by ``kill -9``: not on SIGHUP (a
terminal or an ssh session closed while a file was being replaced), not in a folder
that takes new files but lets none be removed (``chattr +a``)."""

from __future__ import annotations

import os
import signal
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codemod.run.io import TEMP_SUFFIX
from tests.bytes_helpers import CUDA, HANG_GUARD_S, environment, error_lines, wait_for
from tests.cli_helpers import run_cli

# torchport with every write paused right after its temporary file is written and
# flushed: the worker says so by creating $PAUSED, then waits for $GO to exist.
PAUSE = """
import os, sys, time
from pathlib import Path
real_fsync = os.fsync
def fsync(fd):
    real_fsync(fd)
    Path(os.environ["PAUSED"]).write_text("")
    while not os.path.exists(os.environ["GO"]):
        time.sleep(0.01)
os.fsync = fsync
from codemod.cli import main
sys.argv[0] = "torchport"
main()
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sighup_while_a_file_is_replaced_leaves_no_temporary_file(tmp_path, jobs):
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(3):
        (tree / f"f{i}.py").write_text(CUDA)
    paused, go = tmp_path / "paused", tmp_path / "go"
    proc = subprocess.Popen(
        [sys.executable, "-c", PAUSE, "--jobs", jobs, "."],
        cwd=tree,
        env=environment(PAUSED=str(paused), GO=str(go)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group, as a terminal's job
    )
    try:
        wait_for(paused.exists, "a worker to write a temporary file")
        assert any(p.name.endswith(TEMP_SUFFIX) for p in tree.iterdir())
        os.killpg(proc.pid, signal.SIGHUP)  # what closing the terminal does
        # Let the paused write go on: the signal must wait for its rename.
        go.write_text("")
        proc.wait(timeout=HANG_GUARD_S)
        wait_for(lambda: not _group_alive(proc.pid), "torchport's processes to end")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    names = sorted(p.name for p in tree.iterdir())
    assert names == ["f0.py", "f1.py", "f2.py"], names  # no temporary file
    for name in names:
        text = (tree / name).read_text()
        assert text == CUDA or ".to(_DEVICE())" in text, name  # never half-written


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    for entry in os.listdir("/proc"):  # zombies run nothing
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _chattr(flag: str, path: Path) -> bool:
    chattr = shutil.which("chattr")
    if chattr is None:
        return False
    return (
        subprocess.run([chattr, flag, str(path)], capture_output=True).returncode == 0
    )


@pytest.mark.parametrize("flag, what", [("+a", "append-only"), ("+i", "immutable")])
def test_an_append_only_or_immutable_folder_is_not_written(tmp_path, flag, what):
    folder = tmp_path / "locked"
    folder.mkdir()
    (folder / "a.py").write_text(CUDA)
    (tmp_path / "ok.py").write_text(CUDA)
    if not _chattr(flag, folder):
        pytest.skip(f"chattr {flag} is refused here (file system or capabilities)")
    try:
        proc = run_cli(["."], cwd=tmp_path)
        names = sorted(p.name for p in folder.iterdir())
    finally:
        _chattr(flag.replace("+", "-"), folder)
    assert proc.returncode == 2, proc.stderr
    assert names == ["a.py"], names  # nothing it could not remove again
    assert error_lines(proc.stderr) == [
        f"locked/a.py: read-only folder ({what}: chattr {flag}); not written"
    ]
    assert (folder / "a.py").read_text() == CUDA
    assert ".to(_DEVICE())" in (tmp_path / "ok.py").read_text()


def test_an_immutable_file_is_not_written(tmp_path):
    target = tmp_path / "a.py"
    target.write_text(CUDA)
    if not _chattr("+i", target):
        pytest.skip("chattr +i is refused here (file system or capabilities)")
    try:
        proc = run_cli(["a.py"], cwd=tmp_path)
    finally:
        _chattr("-i", target)
    assert proc.returncode == 2, proc.stderr
    assert error_lines(proc.stderr) == [
        "a.py: read-only file (immutable: chattr +i); not written"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]
