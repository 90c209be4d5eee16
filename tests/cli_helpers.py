"""Run the real command line in a subprocess, against this checkout's package."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent


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
