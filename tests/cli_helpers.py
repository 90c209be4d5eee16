"""Run the real command line in a subprocess, against this checkout's package."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
# git with a fixed identity and none of the machine's configuration.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def run_cli(
    args: Sequence[str], cwd: Optional[Path] = None, input: Optional[bytes] = None
) -> subprocess.CompletedProcess:
    """``python -m codemod ARGS``; stdout and stderr come back as text."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "codemod", *args],
        cwd=cwd,
        env=env,
        input=input,
        capture_output=True,
        timeout=300,
    )
    proc.stdout = proc.stdout.decode("utf-8", "replace")
    proc.stderr = proc.stderr.decode("utf-8", "replace")
    return proc


def run_on_a_terminal(
    args: Sequence[str], cwd: Path, stream: str = "stderr", **env: str
) -> str:
    """Run the command line with ``stream`` on a pseudo-terminal (the other one
    discarded); return what it showed. ``env`` overrides the environment, without
    the CI and NO_COLOR of the caller."""
    import pty

    leader, follower = pty.openpty()
    environment = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="80")
    environment.pop("CI", None)
    environment.pop("NO_COLOR", None)
    environment.update(env)
    streams = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    streams[stream] = follower
    proc = subprocess.Popen(
        [sys.executable, "-m", "codemod", *args], cwd=cwd, env=environment, **streams
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        shown += chunk
    proc.wait(timeout=300)
    os.close(leader)
    return shown.decode("utf-8", "replace")


# A CUDA program, and one with a site of three rules: TP201 (a method), TP109 (a
# string torchport cannot type) and TP304 (the runtime API).
CUDA = "import torch\n\nx = torch.ones(2).cuda()\nprint(x.sum().item())\n"
THREE = (
    "import torch\n\n"
    "x = torch.ones(2).cuda()\n"
    'DEVICES = ["cuda", "cpu"]\n'
    "torch.cuda.synchronize()\n"
    "print(x, DEVICES)\n"
)


# The summary, and the lines after it that say what to do next (as Ruff ends).
SUMMARY = re.compile(r"^(Rewrote|Would rewrite) ")
NEXT_STEP = re.compile(
    r"^\d+ (fixable with `torchport fix`|unsafe fix(es)? available|sites? that no fix)"
)


def summary_line(stderr: str) -> str:
    """The run's one summary line."""
    (line,) = [line for line in stderr.splitlines() if SUMMARY.match(line)]
    return line


def record_lines(stderr: str) -> list:
    """Every line of stderr but the summary and the next steps after it."""
    return [
        line
        for line in stderr.splitlines()
        if not SUMMARY.match(line) and not NEXT_STEP.match(line)
    ]


def codes(stdout: str):
    return sorted(
        line.split(": ")[1].split()[0] for line in stdout.splitlines() if ": TP" in line
    )
