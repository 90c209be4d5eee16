"""Ctrl-C while Python is still importing torchport's command line (the first tenths
of a second of `torchport ...`, before click or the commands can catch it) ends as
at any later moment: one line and exit 130, no traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.cli_helpers import ROOT

# The console script pip writes for `torchport`, with Ctrl-C arriving at chosen
# points of its import of the command line.
WRAPPER = """
import os, signal, sys
{before}
from codemod.cli import main
{after}
sys.exit(main())
"""
CTRL_C = "os.kill(os.getpid(), signal.SIGINT)"


def _as_in_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(
    "before, after",
    [
        (f"import codemod; {CTRL_C}", ""),  # codemod imported, codemod.cli not yet
        ("", CTRL_C),  # main found, click not yet imported
        ("import codemod.cli.app", CTRL_C),
    ],
    ids=["finding-the-cli", "before-main", "after-click"],
)
def test_ctrl_c_while_importing_is_one_line(tmp_path, before, after):
    script = WRAPPER.format(before=before, after=after)
    proc = subprocess.run(
        [sys.executable, "-c", script, "check", "."],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_as_in_a_terminal,
    )
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr == "torchport: interrupted\n"
    assert proc.stdout == ""
