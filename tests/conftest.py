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


# The tests that make up most of the suite's time (programs run on CPU PyTorch,
# the simulated accelerator, real pre-commit, signals, fuzzing, benchmarks):
# `pytest -m "not slow"` leaves them out for a quick run while working.
SLOW = (
    "tests/test_simulator.py",
    "tests/test_fixtures.py::test_after_runs_on_cpu",
    "tests/test_programs.py::test_after_runs_on_cpu",
    "tests/test_notebook.py::test_after_code_runs_on_cpu",
    "tests/test_notebook_magics.py::test_python_cell_magics_are_rewritten_and_run_on_cpu",
    "tests/test_black_helper.py::test_the_helper_formats_every_fixture_as_black_does_here",
    "tests/test_config_file.py::test_device_import_is_used_instead_of_a_binding",
    "tests/test_precommit.py",
    "tests/test_interrupt.py",
    "tests/test_determinism.py",
    "tests/test_benchmark_scripts.py",
    "tests/test_fuzz.py",
    "tests/test_concurrency.py",
    "tests/test_cuda_equivalence.py",
    "tests/test_readme_snippets.py::test_command_lines_run_as_written",
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)
