"""Shared fixtures of the test suite."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.program_runner import ProgramRunner


@pytest.fixture(scope="session")
def program_runner():
    """Runs Python programs as ``python PROGRAM`` would, on CPU PyTorch, importing
    torch once per test process instead of once per program."""
    env = dict(os.environ, PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="")
    runner = ProgramRunner(env)
    yield runner
    runner.close()


@pytest.fixture()
def reachable_tmp():
    """A fresh folder every user can reach (pytest's own are its owner's only)."""
    folder = Path(tempfile.mkdtemp(prefix="torchport-test-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        for directory, folders, _ in os.walk(folder):
            for name in folders:
                try:
                    os.chmod(os.path.join(directory, name), 0o755)
                except OSError:  # a path too long: rmtree removes it by descriptor
                    pass
        shutil.rmtree(folder, ignore_errors=True)
