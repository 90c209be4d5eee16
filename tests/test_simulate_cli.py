"""`torchport simulate`'s command line: bad usage is exit 2, a command that cannot
run and a cache folder that cannot be used are one line each (no traceback), and a
SIGTERM or SIGHUP to it reaches the command, whose end it then waits for. None of
these build the simulator (the signal tests stand in for the build)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli_helpers import ROOT, run_cli

HANG_GUARD_S = 300


def _simulate(args, cwd, **env):
    environment = dict(os.environ, PYTHONPATH=str(ROOT), **env)
    return subprocess.run(
        [sys.executable, "-m", "codemod", "simulate", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )


@pytest.mark.parametrize("devices", ["17", "-1", "two"])
def test_a_bad_device_count_is_bad_usage(tmp_path, devices):
    proc = run_cli(["simulate", "--devices", devices, "--", "true"], cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "argument --devices" in proc.stderr and "Traceback" not in proc.stderr


def test_a_command_that_cannot_run_is_one_line(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a program\n")
    for program, code, why in [
        (str(text), 126, "not executable"),
        (str(tmp_path), 126, "a folder"),
        (str(tmp_path / "missing"), 127, "no such file"),
        ("no-such-command-anywhere", 127, "command not found"),
    ]:
        proc = _simulate(["--", program], tmp_path)
        assert proc.returncode == code, proc.stderr
        assert proc.stderr.count("\n") == 1 and why in proc.stderr, proc.stderr


def test_a_cache_folder_that_cannot_be_used_is_one_line(tmp_path):
    afile = tmp_path / "cache"
    afile.write_text("")
    places = [afile, afile / "below"]
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        places.append(locked)
    for place in places:
        proc = _simulate(["--", "true"], tmp_path, TORCHPORT_CACHE_DIR=str(place))
        assert proc.returncode == 3, proc.stderr
        assert proc.stderr.count("\n") == 1, proc.stderr
        assert f"cannot use the cache folder {place} ($TORCHPORT_CACHE_DIR)" in (
            proc.stderr
        )


# `simulate` with the build and its environment stood in for: what is tested is
# how it runs the command.
PARENT = """
import sys
from codemod.simulate import _cli
_cli.build = lambda verbose=False: "tpsim.so"
_cli.environment = lambda devices, **settings: None
sys.exit(_cli.main(sys.argv[1:]))
"""
# The command: says it is ready, and on the signal takes a moment before it ends,
# so that a parent that does not wait would be gone first.
CHILD = """
import signal, sys, time
from pathlib import Path
def stop(number, frame):
    time.sleep(0.5)
    Path(sys.argv[1]).write_text(str(number))
    sys.exit(5)
signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGHUP, stop)
Path(sys.argv[2]).write_text("")
time.sleep(300)
"""


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_reaches_the_command_and_its_end_is_awaited(tmp_path, number):
    got, ready = tmp_path / "got", tmp_path / "ready"
    command = [sys.executable, "-c", CHILD, str(got), str(ready)]
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, "--", *command],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(number, signal.SIG_DFL),
    )
    guard = time.monotonic() + HANG_GUARD_S
    while not ready.exists():
        assert parent.poll() is None, parent.communicate()
        assert time.monotonic() < guard, "the command never started (hang guard)"
        time.sleep(0.05)
    parent.send_signal(number)
    _, stderr = parent.communicate(timeout=HANG_GUARD_S)
    assert got.exists(), "the command did not get the signal, or was not awaited"
    assert Path(got).read_text() == str(int(number))
    assert parent.returncode == 5, stderr
