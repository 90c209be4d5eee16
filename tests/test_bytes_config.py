"""Configuration files nested deeper than their readers recurse are one line, never
a traceback: a pyproject.toml with arrays or inline tables nested hundreds deep
(the TOML reader recurses once a level), a setup.py or a device-import module that
CPython's compiler cannot build (100,000 unary minus signs, a 300,000-term sum)."""

from __future__ import annotations

import pytest

from tests.bytes_helpers import CUDA, error_lines
from tests.cli_helpers import run_cli

DEEP_TOML = {
    "arrays": "exclude = " + "[" * 1000 + "]" * 1000,
    "inline-tables": "x = " + "{a = " * 600 + "1" + "}" * 600,
}
UNCOMPILABLE = {  # what CPython's compiler gives up on (MemoryError, RecursionError)
    "unary-minus": "y = " + "-" * 100_000 + "1\n",
    "long-sum": "y = " + " + ".join(["1"] * 300_000) + "\n",
}


@pytest.mark.parametrize("shape", sorted(DEEP_TOML))
def test_pyproject_nested_too_deep_is_one_line(tmp_path, shape):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.torchport]\n" + DEEP_TOML[shape] + "\n")
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["a.py"], cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, proc.stderr
    assert error_lines(proc.stderr) == [
        f"torchport: {pyproject}: cannot read: arrays or tables nested too deep"
        " for the TOML reader"
    ]
    assert (tmp_path / "a.py").read_text() == CUDA


@pytest.mark.parametrize("shape", sorted(UNCOMPILABLE))
def test_setup_py_python_cannot_compile_is_reported_once(tmp_path, shape):
    # setup.py is read for install_requires (torch>=2.4 would set the target), and
    # processed as any file: its line comes from processing, the run goes on.
    setup = (
        "from setuptools import setup\nimport torch\nx = torch.ones(1).cuda()\n"
        + UNCOMPILABLE[shape]
        + "setup(install_requires=['torch>=2.4'])\n"
    )
    (tmp_path / "setup.py").write_text(setup)
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["."], cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, proc.stderr
    [line] = error_lines(proc.stderr)
    assert line.startswith("setup.py: cannot parse: "), line
    assert (tmp_path / "setup.py").read_text() == setup
    assert ".to(_DEVICE())" in (tmp_path / "a.py").read_text()


def test_setup_py_without_cuda_that_python_cannot_compile_declares_nothing(tmp_path):
    # nothing to process in it, and no torch floor can be read from it
    setup = UNCOMPILABLE["unary-minus"] + "setup(install_requires=['torch>=2.4'])\n"
    (tmp_path / "setup.py").write_text(setup)
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["."], cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert ".to(_DEVICE())" in (tmp_path / "a.py").read_text()


@pytest.mark.parametrize("shape", sorted(UNCOMPILABLE))
def test_a_device_import_module_python_cannot_compile_is_one_line(tmp_path, shape):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchport]\ndevice-import = "from mydevice import DEVICE"\n'
    )
    module = tmp_path / "mydevice.py"
    module.write_text("DEVICE = 'cpu'\n" + UNCOMPILABLE[shape])
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["a.py"], cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, proc.stderr
    assert error_lines(proc.stderr) == [
        f"torchport: {tmp_path / 'pyproject.toml'}: tool.torchport.device-import:"
        f" {module} cannot be compiled by Python (nested too deep or too large);"
        " the rewritten code would fail importing it"
    ]
    assert (tmp_path / "a.py").read_text() == CUDA
