"""Shared fixtures of the test suite."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.fixture_cases import FIXTURES
from tests.program_runner import ProgramRunner

CPU_ENV = dict(os.environ, PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="")
SIMULATED_DEVICES = 2


class _Lazy:
    """A program runner started when first asked to run something."""

    def __init__(self, start):
        self._start, self._runner = start, None

    def run(self, *args, **kwargs) -> subprocess.CompletedProcess:
        if self._runner is None:
            self._runner = self._start()
        return self._runner.run(*args, **kwargs)

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()


def _simulated_runner() -> ProgramRunner:
    """Python processes that load the tpsim simulator at ``import torch``. A simulator
    that cannot be built fails the tests that need it (SimulatorError), never skips."""
    from codemod import simulate

    simulate.build()
    return ProgramRunner(simulate.environment(SIMULATED_DEVICES, base=CPU_ENV))


class FixtureRuns:
    """Each fixture after file run once a session on each side, whichever test (of
    whichever xdist worker) asks first; the others read its result from ``folder``.

    ``"cpu"``: as ``python PROGRAM`` on CPU PyTorch; ``"tpsim"``: on the simulated
    accelerator, traced (tests/branch_tracer.py), with ``hits`` on the result.
    """

    def __init__(self, folder: Path, runners):
        self._folder, self._runners = folder, runners
        folder.mkdir(parents=True, exist_ok=True)

    def get(self, side: str, program: Path, cwd: Path) -> subprocess.CompletedProcess:
        name = program.relative_to(FIXTURES).as_posix().replace("/", "__")
        entry = self._folder / f"{side}__{name}.json"
        with open(entry.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not entry.exists():
                cwd.mkdir(parents=True, exist_ok=True)
                proc = self._runners[side].run(program, cwd, trace=side == "tpsim")
                saved = vars(proc).copy()
                saved["hits"] = getattr(proc, "hits", None)
                temp = entry.with_suffix(".tmp")
                temp.write_text(json.dumps(saved), encoding="utf-8")
                os.replace(temp, entry)
        saved = json.loads(entry.read_text(encoding="utf-8"))
        hits = saved.pop("hits")
        proc = subprocess.CompletedProcess(**saved)
        proc.hits = {int(k): v for k, v in hits.items()} if hits is not None else None
        return proc


class _CpuRunner:
    """``ProgramRunner.run``, except that a fixture's after file run as it stands is
    run once a session (``FixtureRuns``), for tests/test_fixtures.py,
    tests/test_programs.py and tests/test_simulated_runs.py alike."""

    def __init__(self, runner, runs: FixtureRuns):
        self._runner, self._runs = runner, runs

    def run(
        self, program: Path, cwd: Path, argv=None, trace: bool = False
    ) -> subprocess.CompletedProcess:
        program = Path(program)
        if argv is None and not trace and program.name.endswith(".after.py"):
            if program.resolve().is_relative_to(FIXTURES):
                return self._runs.get("cpu", program.resolve(), cwd)
        return self._runner.run(program, cwd, argv, trace=trace)


def shared_dir(tmp_path_factory) -> Path:
    """This session's temporary folder, the same for every xdist worker."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def _runners():
    runners = {
        "cpu": _Lazy(lambda: ProgramRunner(CPU_ENV)),
        "tpsim": _Lazy(_simulated_runner),
    }
    yield runners
    for runner in runners.values():
        runner.close()


@pytest.fixture(scope="session")
def fixture_runs(_runners, tmp_path_factory) -> FixtureRuns:
    return FixtureRuns(shared_dir(tmp_path_factory) / "fixture-runs", _runners)


@pytest.fixture(scope="session")
def program_runner(_runners, fixture_runs):
    """Runs Python programs as ``python PROGRAM`` would, on CPU PyTorch, importing
    torch once per test process instead of once per program; ``run(..., trace=True)``
    counts branches (tests/branch_tracer.py)."""
    return _CpuRunner(_runners["cpu"], fixture_runs)


@pytest.fixture(scope="session")
def simulated_runner(_runners):
    """Runs Python programs as ``python PROGRAM`` would, on the simulated accelerator
    (``SIMULATED_DEVICES`` tpsim devices); ``run(..., trace=True)`` counts branches."""
    return _runners["tpsim"]


# The tests that make up most of the suite's time (programs run on CPU PyTorch,
# the simulated accelerator, real pre-commit, signals, fuzzing, benchmarks):
# `pytest -m "not slow"` leaves them out for a quick run while working.
SLOW = (
    "tests/test_simulator.py",
    "tests/test_simulated_runs.py",
    "tests/test_unsafe_fixes.py",
    "tests/test_cuda_timing.py",
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
    "tests/test_cpu_equivalence.py",
    "tests/test_readme_snippets.py::test_command_lines_run_as_written",
    # A project's own tests run twice on PyTorch; a file of 5 MB.
    "tests/test_patched_elsewhere.py::test_the_patched_module_keeps_its_calls_and_the_test_still_passes",
    "tests/test_robustness.py::test_big_file_is_rewritten",
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)


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
