"""device-import must point at a module that exists and binds the name."""

from __future__ import annotations

from tests.cli_helpers import run_cli

CUDA = "import torch\n\nx = torch.ones(2).cuda()\nprint(x.sum().item())\n"
RUNTIME = 'import torch\n\nDEVICE = torch.device("cpu")\n'


def _project(tmp_path, statement, files):
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.torchport]\ndevice-import = "{statement}"\n'
    )
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "train.py").write_text(CUDA)
    return tmp_path


def _with_runtime(tmp_path, statement):
    package = {"myproj/__init__.py": "", "myproj/runtime.py": RUNTIME}
    return _project(tmp_path, statement, package)


def test_a_missing_module_is_an_error(tmp_path):
    root = _with_runtime(tmp_path, "from myproj.runtim import DEVICE")
    proc = run_cli(["."], cwd=root)
    assert proc.returncode == 2
    assert "tool.torchport.device-import: module 'myproj.runtim' not found" in (
        proc.stderr
    )
    assert "ModuleNotFoundError" in proc.stderr
    assert (root / "train.py").read_text() == CUDA


def test_a_module_without_the_name_is_an_error(tmp_path):
    root = _with_runtime(tmp_path, "from myproj.runtime import DEV")
    proc = run_cli(["."], cwd=root)
    assert proc.returncode == 2
    assert "runtime.py does not define 'DEV'" in proc.stderr


def test_src_layout_and_installed_modules_resolve(tmp_path):
    root = _project(
        tmp_path,
        "from myproj.runtime import DEVICE",
        {"src/myproj/__init__.py": "", "src/myproj/runtime.py": RUNTIME},
    )
    proc = run_cli(["check", "train.py"], cwd=root)
    assert proc.returncode == 1 and "TP201" in proc.stdout  # accepted
    # A module importable from the environment (never imported to check it).
    (root / "pyproject.toml").write_text(
        '[tool.torchport]\ndevice-import = "from json import JSONDecoder"\n'
    )
    assert run_cli(["check", "train.py"], cwd=root).returncode == 1
