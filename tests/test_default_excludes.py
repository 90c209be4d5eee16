"""The default excludes (``build/``, ``dist/``, virtualenvs...) skip build output,
never a real package nor a file git tracks, and the run says what they skipped."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.cli_helpers import CUDA, GIT_ENV, run_cli, summary_line


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True)


def test_a_package_named_dist_is_processed(tmp_path):
    package = tmp_path / "mmengine" / "dist"
    package.mkdir(parents=True)
    (tmp_path / "mmengine" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "utils.py").write_text(CUDA)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "gen.py").write_text(CUDA)  # build output: skipped
    proc = run_cli(["check", "--show-files", "."], cwd=tmp_path)
    assert proc.stdout.splitlines() == [
        os.path.join("mmengine", "__init__.py"),
        os.path.join("mmengine", "dist", "__init__.py"),
        os.path.join("mmengine", "dist", "utils.py"),
    ]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_tracked_file_is_never_skipped_by_a_default(tmp_path):
    _git(tmp_path, "init", "-q")
    for folder in ("build", "dist", "venv"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "tracked.py").write_text(CUDA)
        (tmp_path / folder / "untracked.py").write_text(CUDA)
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr\n")
    _git(tmp_path, "add", "build/tracked.py", "dist/tracked.py", "venv/tracked.py")
    proc = run_cli(["check", "--show-files", "."], cwd=tmp_path)
    assert proc.stdout.splitlines() == [
        os.path.join(folder, "tracked.py") for folder in ("build", "dist", "venv")
    ]


def test_the_summary_says_how_many_files_a_default_skipped(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    for folder in ("build", "dist"):
        (tmp_path / folder / "deep").mkdir(parents=True)
        (tmp_path / folder / "x.py").write_text(CUDA)
        (tmp_path / folder / "deep" / "y.ipynb").write_text("{}")
        (tmp_path / folder / "notes.txt").write_text("")
    proc = run_cli(["check", "."], cwd=tmp_path)
    summary = summary_line(proc.stderr)
    assert summary.endswith(
        f"; 4 files in build{os.sep}, dist{os.sep} skipped by the default excludes"
        " (name a folder to process it)"
    ), proc.stderr
    proc = run_cli(["check", "build"], cwd=tmp_path)  # named: processed
    assert "build/x.py" in proc.stdout and "skipped" not in proc.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_what_git_ignores_is_not_counted_as_skipped_by_a_default(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "x.py").write_text(CUDA)
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["check", "."], cwd=tmp_path)
    assert "skipped" not in proc.stderr, proc.stderr
