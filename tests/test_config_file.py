"""``[tool.torchport]`` in pyproject.toml: discovery, every key, errors, flags winning."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codemod.config.pyproject import ConfigError
from codemod.config.settings import resolve_options
from tests.cli_helpers import run_cli

CUDA = "import torch\n\nx = torch.ones(2).cuda()\nprint(x.sum().item())\n"
STRING_LEFT = 'import torch\n\nDEVICES = ["cuda", "cpu"]\nprint(DEVICES)\n'


def project(tmp_path: Path, table: str, files=None) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\n\n[tool.torchport]\n" + textwrap.dedent(table)
    )
    for name, text in (files or {}).items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


# -- errors: one line naming the file and the key, exit 2, no traceback ------------
@pytest.mark.parametrize(
    "table, key",
    [
        ("colour = 'red'\n", "tool.torchport.colour"),
        ("target-torch = 2.6\n", "tool.torchport.target-torch"),
        ("target-torch = 'two'\n", "tool.torchport.target-torch"),
        ("select = 'TP1'\n", "tool.torchport.select"),
        ("select = ['E501']\n", "tool.torchport.select"),
        ("ignore = [3]\n", "tool.torchport.ignore"),
        ("per-file-ignores = {'tests/*' = 'TP2'}\n", "tool.torchport.per-file-ignores"),
        (
            "per-file-ignores = {'tests/*' = ['XX1']}\n",
            "tool.torchport.per-file-ignores",
        ),
        ("exclude = [1]\n", "tool.torchport.exclude"),
        ("device-name = 'not a name'\n", "tool.torchport.device-name"),
        ("device-import = 'import myproj'\n", "tool.torchport.device-import"),
        (
            "device-import = 'from .runtime import DEVICE'\n",
            "tool.torchport.device-import",
        ),
        ("unsafe-fixes = 'yes'\n", "tool.torchport.unsafe-fixes"),
        ("format = 1\n", "tool.torchport.format"),
    ],
)
def test_bad_configuration_is_one_line_exit_2(tmp_path, table, key):
    root = project(tmp_path, table, {"train.py": CUDA})
    proc = run_cli(["train.py"], cwd=root)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert str(root / "pyproject.toml") in lines[0] and key in lines[0]
    assert "Traceback" not in proc.stderr
    assert (root / "train.py").read_text() == CUDA


def test_toml_syntax_error_is_one_line(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.torchport\nselect = [\n")
    (tmp_path / "train.py").write_text(CUDA)
    proc = run_cli(["train.py"], cwd=tmp_path)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "pyproject.toml: cannot read" in proc.stderr


def test_bad_flag_names_the_flag(tmp_path):
    (tmp_path / "train.py").write_text(CUDA)
    for args, flag in [
        (["--target-torch", "latest"], "--target-torch"),
        (["--select", "E501"], "--select"),
    ]:
        proc = run_cli([*args, "train.py"], cwd=tmp_path)
        assert proc.returncode == 2 and flag in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1


# -- discovery -------------------------------------------------------------------
def test_nearest_pyproject_is_found_from_the_paths_not_the_cwd(tmp_path):
    (tmp_path / "proj").mkdir()
    root = project(tmp_path / "proj", "ignore = ['TP2']\n", {"src/train.py": CUDA})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = run_cli(["--diff", str(root / "src" / "train.py")], cwd=elsewhere)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr
    # As in Ruff, a nearer pyproject.toml without [tool.torchport] is passed over...
    (root / "src" / "pyproject.toml").write_text("[tool.black]\n")
    proc = run_cli(["--diff", str(root / "src" / "train.py")], cwd=elsewhere)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr
    # ...and one with the table wins for the files below it (nothing is merged).
    (root / "src" / "pyproject.toml").write_text("[tool.torchport]\n")
    proc = run_cli(["--diff", str(root / "src" / "train.py")], cwd=elsewhere)
    assert proc.returncode == 1 and ".to(_DEVICE())" in proc.stdout


def test_settings_come_from_the_folder_holding_all_paths(tmp_path):
    root = project(tmp_path, "device-name = 'ACCEL'\n")
    (root / "a").mkdir()
    (root / "b").mkdir()
    settings = resolve_options([str(root / "a" / "x.py"), str(root / "b" / "y.py")], {})
    assert settings.options.device_name == "ACCEL"
    assert settings.root == root.resolve()


# -- keys --------------------------------------------------------------------------
def test_every_key_reaches_the_options(tmp_path):
    root = project(
        tmp_path,
        """
        select = ["TP1"]
        extend-select = ["TP201"]
        ignore = ["TP104"]
        target-torch = "2.7"
        device-name = "ACCEL"
        unsafe-fixes = true
        format = false
        """,
    )
    settings = resolve_options([str(root)], {})
    options = settings.options
    assert options.target_torch == (2, 7) and settings.target_source.endswith(
        "pyproject.toml"
    )
    assert options.device_name == "ACCEL" and options.unsafe_fixes is True
    assert settings.format is False
    enabled = {
        c: options.selection.enabled(c) for c in ("TP101", "TP104", "TP201", "TP202")
    }
    assert enabled == {"TP101": True, "TP104": False, "TP201": True, "TP202": False}


def test_command_line_flags_win(tmp_path):
    root = project(
        tmp_path,
        """
        select = ["TP1"]
        target-torch = "2.7"
        device-name = "ACCEL"
        unsafe-fixes = true
        format = false
        """,
    )
    flags = {
        "select": "TP2",
        "target-torch": "2.9",
        "device-name": "DEV",
        "unsafe-fixes": False,
        "format": True,
    }
    settings = resolve_options([str(root)], flags)
    options = settings.options
    assert options.target_torch == (2, 9) and settings.target_source == "--target-torch"
    assert options.device_name == "DEV" and options.unsafe_fixes is False
    assert settings.format is True
    assert options.selection.enabled("TP201") and not options.selection.enabled("TP101")


def test_device_name_from_config_is_used(tmp_path):
    root = project(tmp_path, "device-name = 'ACCEL'\n", {"train.py": CUDA})
    proc = run_cli(["train.py"], cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert ".to(ACCEL())" in (root / "train.py").read_text()


def test_format_false_leaves_the_rewrite_unformatted(tmp_path):
    source = "import torch\nx = torch.zeros(2, device = 'cuda')\n"
    root = project(tmp_path, "format = false\n", {"a.py": source, "b.py": source})
    assert run_cli(["a.py"], cwd=root).returncode == 0
    assert "x = torch.zeros(2, device = _DEVICE())" in (root / "a.py").read_text()
    assert run_cli(["--format", "b.py"], cwd=root).returncode == 0
    assert "x = torch.zeros(2, device=_DEVICE())" in (root / "b.py").read_text()


def test_per_file_ignores_reach_each_file_in_the_workers(tmp_path):
    files = {f"src/m{i}.py": CUDA for i in range(4)}
    files.update({f"tests/test_m{i}.py": CUDA for i in range(4)})
    files["scripts/bench.py"] = STRING_LEFT
    root = project(
        tmp_path,
        """
        [tool.torchport.per-file-ignores]
        "tests/**" = ["TP2"]
        "bench.py" = ["ALL"]
        """,
        files,
    )
    proc = run_cli(["-j", "2", "."], cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for i in range(4):
        assert ".to(_DEVICE())" in (root / f"src/m{i}.py").read_text()
        assert (root / f"tests/test_m{i}.py").read_text() == CUDA
    assert (root / "scripts/bench.py").read_text() == STRING_LEFT


def test_per_file_ignores_apply_to_stdin_filename(tmp_path):
    root = project(
        tmp_path, '[tool.torchport.per-file-ignores]\n"tests/*" = ["TP201"]\n'
    )
    args = ["--stdin-filename", str(root / "tests" / "t.py"), "-"]
    proc = run_cli(args, cwd=root, input=CUDA.encode())
    assert proc.returncode == 0 and proc.stdout == CUDA


def test_per_file_options_pickle(tmp_path):
    root = project(tmp_path, '[tool.torchport.per-file-ignores]\n"tests/*" = ["TP2"]\n')
    per_file = resolve_options([str(root)], {}).per_file
    per_file(root / "tests" / "a.py")  # compile the patterns, then ship them
    copy = pickle.loads(pickle.dumps(per_file))
    assert not copy(root / "tests" / "a.py").selection.enabled("TP201")
    assert copy(root / "src" / "a.py").selection.enabled("TP201")


def test_exclude_and_extend_exclude(tmp_path):
    files = {
        "keep.py": CUDA,
        "vendored/lib.py": CUDA,
        "gen/out.py": CUDA,
        "x_pb2.py": CUDA,
    }
    root = project(
        tmp_path,
        "exclude = ['vendored/']\nextend-exclude = ['gen', '*_pb2.py']\n",
        files,
    )
    proc = run_cli(["."], cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert ".to(_DEVICE())" in (root / "keep.py").read_text()
    for name in ("vendored/lib.py", "gen/out.py", "x_pb2.py"):
        assert (root / name).read_text() == CUDA, name
    # Named one by one (as pre-commit passes them), excluded files stay excluded.
    proc = run_cli(["vendored/lib.py", "x_pb2.py"], cwd=root)
    assert proc.returncode == 0
    assert (root / "vendored/lib.py").read_text() == CUDA


# -- device-import --------------------------------------------------------------------
RUNTIME = (
    "import torch\n\n"
    'DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
)


@pytest.fixture
def runtime_project(tmp_path):
    return project(
        tmp_path,
        'device-import = "from myproj.runtime import DEVICE"\n',
        {
            "myproj/__init__.py": "",
            "myproj/runtime.py": RUNTIME,
            "train.py": CUDA,
            "shadow.py": "import torch\n\nDEVICE = 3\nx = torch.ones(2).cuda()\nprint(x, DEVICE)\n",
            "local.py": (
                "import torch\n\n\ndef f():\n    DEVICE = 1\n"
                "    return torch.ones(DEVICE).cuda()\n\n\nprint(f())\n"
            ),
            "aliased.py": (
                "import torch\nfrom myproj.runtime import DEVICE as D\n\n"
                "x = torch.ones(2).cuda()\nprint(x)\n"
            ),
        },
    )


def test_device_import_is_used_instead_of_a_binding(runtime_project):
    root = runtime_project
    proc = run_cli(["."], cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    train = (root / "train.py").read_text()
    assert train == (
        "import torch\nfrom myproj.runtime import DEVICE\n\n"
        "x = torch.ones(2).to(DEVICE)\nprint(x.sum().item())\n"
    )
    # A module-level name of the user's own is not shadowed: the import is aliased.
    shadow = (root / "shadow.py").read_text()
    assert "from myproj.runtime import DEVICE as ACCELERATOR_DEVICE\n" in shadow
    assert "DEVICE = 3\nx = torch.ones(2).to(ACCELERATOR_DEVICE)" in shadow
    assert (
        "torch.ones(DEVICE).to(ACCELERATOR_DEVICE)" in (root / "local.py").read_text()
    )
    # An existing import (under any alias) is reused.
    aliased = (root / "aliased.py").read_text()
    assert "x = torch.ones(2).to(D)" in aliased and aliased.count("import DEVICE") == 1
    # The runtime module defines the device: it gets the binding, not a self-import.
    runtime = (root / "myproj" / "runtime.py").read_text()
    assert "import DEVICE" not in runtime
    assert (
        "DEVICE = (\n    torch.accelerator.current_accelerator()\n"
        "    if torch.accelerator.device_count() > 0\n" in runtime
    )
    # Everything runs on the CPU, and a second run changes nothing.
    for name in ("train.py", "shadow.py", "local.py", "aliased.py"):
        ran = subprocess.run(
            [sys.executable, name],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert ran.returncode == 0, ran.stderr[-2000:]
    again = run_cli(["--check", "."], cwd=root)
    assert again.returncode == 0, again.stdout + again.stderr


def test_device_import_not_added_when_the_device_is_not_needed(runtime_project):
    root = runtime_project
    (root / "only_string.py").write_text(STRING_LEFT)
    run_cli(["only_string.py"], cwd=root)
    assert (root / "only_string.py").read_text() == STRING_LEFT
