"""Configuration found as Ruff finds it: each file's nearest ``[tool.torchport]``
whatever else the run was given, a pyproject.toml without the table passed over;
and inside a git work tree, the files git lists (with every ignore source git has).
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.cli_helpers import CUDA, GIT_ENV, THREE, codes, run_cli


# -- each file's nearest configuration, whatever else is passed ---------------------
@pytest.fixture
def monorepo(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchport]\nignore = ["TP1", "TP3"]\n'
    )
    for package in ("app", "lib"):
        (tmp_path / package).mkdir()
    (tmp_path / "lib" / "pyproject.toml").write_text("[tool.torchport]\n")
    (tmp_path / "lib" / "train.py").write_text(THREE)
    (tmp_path / "app" / "main.py").write_text(THREE)
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ["lib/train.py"],
        ["lib/train.py", "app/main.py"],  # a pre-commit batch
        ["."],
        ["lib"],
    ],
)
def test_a_file_gets_the_same_findings_however_it_is_named(monorepo, args):
    proc = run_cli(["check", "--output-format", "json", *args], cwd=monorepo)
    records = json.loads(proc.stdout)
    lib = sorted(r["code"] for r in records if r["filename"].startswith("lib"))
    app = sorted(r["code"] for r in records if r["filename"].startswith("app"))
    assert lib == ["TP109", "TP201", "TP304"]  # lib/ has a [tool.torchport] of its own
    assert app in ([], ["TP201"])  # the root's ignores apply under app/
    if any(a.startswith("app") or a == "." for a in args):
        assert app == ["TP201"]


def test_a_pyproject_without_the_table_is_passed_over(monorepo):
    (monorepo / "app" / "pyproject.toml").write_text("[project]\nname = 'app'\n")
    proc = run_cli(["check", "app/main.py"], cwd=monorepo)
    assert codes(proc.stdout) == ["TP201"]


# -- git's ignore rules inside a repository ---------------------------------------------
def _git(tmp_path, *args):
    subprocess.run(
        ["git", *args], cwd=tmp_path, check=True, env={**os.environ, **GIT_ENV}
    )


@pytest.mark.parametrize("source", ["info/exclude", "core.excludesFile"])
def test_gits_ignore_files_are_honoured(tmp_path, source):
    _git(tmp_path, "init", "-q")
    if source == "info/exclude":
        (tmp_path / ".git" / "info").mkdir(exist_ok=True)
        (tmp_path / ".git" / "info" / "exclude").write_text("# local\nscratch/\n")
    else:
        excludes = tmp_path.parent / f"{tmp_path.name}-excludes"
        excludes.write_text("scratch/\n")
        _git(tmp_path, "config", "core.excludesFile", str(excludes))
    (tmp_path / "scratch").mkdir()
    (tmp_path / "scratch" / "a.py").write_text(CUDA)
    (tmp_path / "b.py").write_text(CUDA)
    proc = run_cli(["check", "."], cwd=tmp_path)
    assert "b.py" in proc.stdout and "scratch" not in proc.stdout


def test_nested_repositories_and_venvs_and_links(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "vendor").mkdir()
    _git(tmp_path / "vendor", "init", "-q")
    (tmp_path / "vendor" / ".gitignore").write_text("skip.py\n")
    (tmp_path / "vendor" / "v.py").write_text(CUDA)
    (tmp_path / "vendor" / "skip.py").write_text(CUDA)
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "env" / "e.py").write_text(CUDA)
    (tmp_path / "link.py").symlink_to(tmp_path / "vendor" / "v.py")
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["check", "--show-files", "."], cwd=tmp_path)
    assert proc.stdout.splitlines() == ["a.py", os.path.join("vendor", "v.py")]


def test_exclude_applies_to_what_git_lists(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchport]\nexclude = ["third_party/"]\n'
    )
    (tmp_path / "third_party").mkdir()
    (tmp_path / "third_party" / "t.py").write_text(CUDA)
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["check", "--show-files", "."], cwd=tmp_path)
    assert proc.stdout.splitlines() == ["a.py"]
