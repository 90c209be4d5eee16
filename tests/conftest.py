"""Shared fixtures of the test suite."""

from __future__ import annotations

import os

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
