"""A test in one file patches another module's view of torch.cuda
(`mock.patch("pkg.train.torch.cuda.is_available")`): in the same run, that module's
calls of the name stay as written, so that the patch still reaches them."""

from __future__ import annotations

import subprocess
import sys

from codemod.run.patch_targets import patched_modules, read_run
from tests.cli_helpers import run_cli

MODULE = """import torch


def pick():
    return "cuda" if torch.cuda.is_available() else "cpu"


def sync():
    torch.cuda.synchronize()
"""
TEST = """from unittest import mock

from pkg import train


@mock.patch("pkg.train.torch.cuda.is_available", return_value=False)
def test_no_gpu(_):
    assert train.pick() == "cpu"
"""


def _project(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(MODULE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_train.py").write_text(TEST)
    return tmp_path / "pkg" / "train.py"


def test_the_patched_module_keeps_its_calls_and_the_test_still_passes(tmp_path):
    module = _project(tmp_path)
    proc = run_cli(["."], cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # sites left, reported
    text = module.read_text()
    assert 'return "cuda" if torch.cuda.is_available() else "cpu"' in text
    assert "torch.accelerator.synchronize()" in text  # what no test patches: ported
    assert "tests/test_train.py:6) patches it" in proc.stdout
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr


def test_ported_outside_any_project_the_module_is_rewritten(tmp_path):
    module = _project(tmp_path)  # no pyproject.toml, setup.cfg or .git: no project
    run_cli(["pkg/train.py"], cwd=tmp_path)
    assert "torch.cuda.is_available()" not in module.read_text()


def _passes(tmp_path):
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    return tests.returncode == 0, tests.stdout + tests.stderr


def test_the_library_named_alone_keeps_what_the_project_tests_patch(tmp_path):
    module = _project(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    proc = run_cli(["pkg"], cwd=tmp_path)  # the tests are not named
    assert 'return "cuda" if torch.cuda.is_available() else "cpu"' in module.read_text()
    assert "tests/test_train.py:6) patches it" in proc.stdout
    assert "read the project's 1 test file outside the run" in proc.stderr
    assert "reach 1 file of the run" in proc.stderr
    assert (tmp_path / "tests" / "test_train.py").read_text() == TEST  # not ported
    passed, output = _passes(tmp_path)
    assert passed, output


def test_pytest_testpaths_name_the_tests(tmp_path):
    module = _project(tmp_path)
    (tmp_path / "tests").rename(tmp_path / "checks")
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = checks\n")
    (tmp_path / "checks" / "test_train.py").rename(tmp_path / "checks" / "train_t.py")
    run_cli(["pkg"], cwd=tmp_path)
    assert "torch.cuda.is_available()" in module.read_text()


GLOBAL_TEST = """from unittest import mock

from pkg.api import report


def test_peak():
    with mock.patch("torch.cuda.max_memory_allocated", return_value=4) as peak:
        assert report() == 4
        peak.assert_called()
"""


def test_a_global_patch_keeps_the_calls_of_the_modules_the_test_imports(tmp_path):
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = pkg\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "api.py").write_text(
        "from .memory import peak\n\n\ndef report():\n    return peak()\n"
    )
    memory = tmp_path / "pkg" / "memory.py"
    memory.write_text(
        "import torch\n\n\ndef peak():\n"
        "    return torch.cuda.max_memory_allocated()\n"
    )
    other = tmp_path / "pkg" / "other.py"  # imported by no test: ported
    other.write_text("import torch\n\n\ndef sync():\n    torch.cuda.synchronize()\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_api.py").write_text(GLOBAL_TEST)
    assert _passes(tmp_path)[0]
    for named in (["pkg"], ["."]):  # the library alone, and library and tests
        proc = run_cli(named, cwd=tmp_path)
        assert "torch.cuda.max_memory_allocated()" in memory.read_text()
        assert "tests/test_api.py:7) that imports this module" in proc.stdout
    assert "torch.accelerator.synchronize()" in other.read_text()
    assert _passes(tmp_path)[0]


def test_a_module_name_two_files_could_be_is_not_guessed(tmp_path):
    _project(tmp_path)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "pkg").mkdir()
    (tmp_path / "other" / "pkg" / "train.py").write_text(MODULE)
    files = sorted(tmp_path.rglob("*.py"))
    assert patched_modules(files) == {}
    files = [f for f in files if "other" not in f.parts]
    found = patched_modules(files)
    assert list(found) == [str(tmp_path / "pkg" / "train.py")]
    ((name, where, how),) = found[str(tmp_path / "pkg" / "train.py")]
    assert name == "torch.cuda.is_available" and where.endswith("test_train.py:6")
    assert how == "view"


def test_a_patch_after_non_ascii_text_on_its_line_is_reported(tmp_path):
    # ast counts columns in UTF-8 bytes, libcst in characters: the patch's report
    # must be found at the column libcst gives it.
    (tmp_path / "test_x.py").write_text(
        "from unittest import mock\n"
        "import torch\n"
        "\n"
        "\n"
        "def test_x():\n"
        '    label = "é"; p = mock.patch("torch.cuda.is_available", return_value=False)\n'
        "    with p:\n"
        "        assert not torch.cuda.is_available()\n",
        encoding="utf-8",
    )
    proc = run_cli(["check", "test_x.py"], cwd=tmp_path)
    assert "test_x.py:6:22: TP914" in proc.stdout, proc.stdout


def test_the_project_tests_are_looked_for_only_when_the_run_mentions_cuda(tmp_path):
    plain = tmp_path / "plain.py"
    plain.write_text("x = 1\n")

    def tests():
        raise AssertionError("looked for the tests")

    assert read_run([plain], tests).tests_read == 0
    plain.write_text("import torch\nn = torch.cuda.device_count()\n")
    test = tmp_path / "test_plain.py"
    test.write_text(TEST)
    assert read_run([plain], lambda: [test]).tests_read == 1
