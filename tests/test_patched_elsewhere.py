"""A test in one file patches another module's view of torch.cuda
(`mock.patch("pkg.train.torch.cuda.is_available")`): in the same run, that module's
calls of the name stay as written, so that the patch still reaches them."""

from __future__ import annotations

import subprocess
import sys

from codemod.run.patch_targets import patched_modules
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


def test_ported_apart_the_module_is_rewritten(tmp_path):
    module = _project(tmp_path)
    run_cli(["pkg/train.py"], cwd=tmp_path)
    assert "torch.cuda.is_available()" not in module.read_text()


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
    ((name, where),) = found[str(tmp_path / "pkg" / "train.py")]
    assert name == "torch.cuda.is_available" and where.endswith("test_train.py:6")


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
