"""Configuration: where the target torch release comes from, and what counts as a
declared requirement."""

from __future__ import annotations

import textwrap

import pytest

from codemod.config.requirements import declared_torch, torch_floor
from codemod.config.settings import resolve_options
from tests.cli_helpers import run_cli


def write(root, name, text):
    path = root / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


# -- one requirement ----------------------------------------------------------
FLOORS = [
    ("torch>=2.4", (2, 4)),
    ("torch >= 2.4.1, <3", (2, 4)),
    ("torch==2.5.1", (2, 5)),
    ("torch~=2.3", (2, 3)),
    ("torch>2.2", (2, 2)),
    ("torch>=2.1,>=2.4", (2, 4)),
    ("torch[opt-einsum]>=2.6", (2, 6)),
    ('torch>=2.7; sys_platform == "linux"', (2, 7)),
    ("Torch>=2.6", (2, 6)),
    ("torch (>=2.3)", (2, 3)),
    ("torch", None),
    ("torch<3", None),
    ("torch!=2.5.0", None),
    ("torch==2.*", None),
    ("torchvision>=0.19", None),
    ("torch-geometric>=2.5", None),
    ("torch_xla>=2.5", None),
    ("torch @ https://example.invalid/torch-2.4.0.whl", None),
    ("numpy>=1.24", None),
    ("  torch>=2.4", (2, 4)),
    ("torch>=", None),
    ("torch; python_version >= '3.9'", None),
    ("torch.nightly>=2.4", None),
]


@pytest.mark.parametrize("requirement,expected", FLOORS)
def test_torch_floor(requirement, expected):
    assert torch_floor(requirement) == expected


# -- each source ---------------------------------------------------------------
def test_pyproject_dependencies(tmp_path):
    path = write(
        tmp_path,
        "pyproject.toml",
        """
        [project]
        name = "x"
        dependencies = ["numpy", "torch>=2.4"]
        [project.optional-dependencies]
        test = ["torch==2.13.0"]
    """,
    )
    assert declared_torch(tmp_path) == ((2, 4), str(path))


def test_pyproject_test_extra_alone_declares_nothing(tmp_path):
    write(
        tmp_path,
        "pyproject.toml",
        """
        [project]
        name = "x"
        dependencies = ["numpy"]
        [project.optional-dependencies]
        test = ["torch==2.13.0"]
        [tool.something]
        deps = "torch>=2.1"
    """,
    )
    assert declared_torch(tmp_path) is None


def test_setup_cfg_install_requires_not_extras(tmp_path):
    path = write(
        tmp_path,
        "setup.cfg",
        """
        [metadata]
        name = x
        [options]
        install_requires =
            numpy
            torch>=2.3  # oldest tested
        [options.extras_require]
        test =
            torch==2.13.0
    """,
    )
    assert declared_torch(tmp_path) == ((2, 3), str(path))


def test_setup_cfg_extras_alone_declare_nothing(tmp_path):
    write(
        tmp_path,
        "setup.cfg",
        """
        [options]
        install_requires =
            numpy
        [options.extras_require]
        test =
            torch==2.13.0
    """,
    )
    assert declared_torch(tmp_path) is None


def test_setup_py_install_requires_literal_and_by_name(tmp_path):
    path = write(
        tmp_path,
        "setup.py",
        """
        from setuptools import setup
        setup(name="x", install_requires=["torch>=2.2"], extras_require={"test": ["torch==2.13"]})
    """,
    )
    assert declared_torch(tmp_path) == ((2, 2), str(path))
    write(
        tmp_path,
        "setup.py",
        """
        from setuptools import setup
        REQUIRED = ["numpy", "torch>=2.5"]
        setup(name="x", install_requires=REQUIRED, tests_require=["torch==2.13"])
    """,
    )
    assert declared_torch(tmp_path) == ((2, 5), str(path))


def test_setup_py_is_not_run_and_extras_ignored(tmp_path):
    write(
        tmp_path,
        "setup.py",
        """
        raise SystemExit("setup.py must never run")
        setup(extras_require={"dev": ["torch>=2.1"]})
    """,
    )
    assert declared_torch(tmp_path) is None


def test_requirements_txt_but_not_test_requirements(tmp_path):
    write(tmp_path, "requirements-test.txt", "torch==2.13.0\n")
    write(tmp_path, "requirements-dev.txt", "torch==2.13.0\n")
    assert declared_torch(tmp_path) is None
    path = write(
        tmp_path,
        "requirements.txt",
        """
        # runtime
        -r base.txt
        --extra-index-url https://download.pytorch.org/whl/cpu
        torch>=2.4.0 # CPU wheels are fine
        numpy
    """,
    )
    assert declared_torch(tmp_path) == ((2, 4), str(path))


def test_sources_in_order_first_declaring_one_wins(tmp_path):
    write(tmp_path, "requirements.txt", "torch>=2.1\n")
    write(tmp_path, "setup.py", 'setup(install_requires=["torch>=2.2"])\n')
    assert declared_torch(tmp_path)[0] == (2, 2)
    write(tmp_path, "setup.cfg", "[options]\ninstall_requires =\n    torch>=2.3\n")
    assert declared_torch(tmp_path)[0] == (2, 3)
    write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "x"\ndependencies = ["torch>=2.4"]\n',
    )
    assert declared_torch(tmp_path)[0] == (2, 4)


def test_broken_file_is_skipped(tmp_path):
    write(tmp_path, "pyproject.toml", "[project\n")
    write(tmp_path, "setup.py", "def (:\n")
    write(tmp_path, "requirements.txt", "torch>=2.5\n")
    assert declared_torch(tmp_path)[0] == (2, 5)


# -- precedence: --target-torch > [tool.torchport] > declared > default ---------
PROJECT = '[project]\nname = "x"\ndependencies = ["torch>=2.5"]\n'


def test_precedence(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import torch\n")

    def target(flags=None):
        settings = resolve_options([str(script)], flags or {})
        return settings.options.target_torch, settings.target_source

    assert target() == ((2, 10), "default")
    write(tmp_path, "requirements.txt", "torch>=2.4\n")
    assert target() == ((2, 4), str(tmp_path / "requirements.txt"))
    write(tmp_path, "pyproject.toml", PROJECT)
    assert target() == ((2, 5), str(tmp_path / "pyproject.toml"))
    write(
        tmp_path, "pyproject.toml", PROJECT + '[tool.torchport]\ntarget-torch = "2.7"\n'
    )
    assert target() == ((2, 7), str(tmp_path / "pyproject.toml"))
    assert target({"target-torch": "2.9"}) == ((2, 9), "--target-torch")


def test_old_target_is_said_once_on_stderr(tmp_path):
    write(tmp_path, "requirements.txt", "torch>=2.4\n")
    for name in ("a.py", "b.py"):
        write(tmp_path, name, "import torch\nscaler = torch.cuda.amp.GradScaler()\n")
    proc = run_cli(["--check", "."], cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.count("torch.accelerator needs torch >= 2.6") == 1
    assert "target torch 2.4" in proc.stderr and "requirements.txt" in proc.stderr
    assert proc.stdout.count("TP402") == 2 and "target is 2.4" in proc.stdout


def test_current_target_says_nothing(tmp_path):
    write(tmp_path, "a.py", "import torch\n")
    proc = run_cli(["--check", "--target-torch", "2.6", "."], cwd=tmp_path)
    assert "torch.accelerator needs" not in proc.stderr
