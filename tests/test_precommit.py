"""The shipped pre-commit hooks, run by the real ``pre-commit`` against this checkout.

pre-commit installs the hook repository into its own virtualenv (from the package
index, like a user's machine), once per test session.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli_helpers import GIT_ENV, ROOT

PRE_COMMIT = shutil.which("pre-commit") or str(
    Path(sys.executable).parent / "pre-commit"
)
CUDA = "import torch\n\nx = torch.ones(2).cuda()\nprint(x.sum().item())\n"
LEFT = 'import torch\n\nDEVICES = ["cuda", "cpu"]\nprint(DEVICES)\n'

pytestmark = pytest.mark.skipif(
    not Path(PRE_COMMIT).exists() or shutil.which("git") is None,
    reason="needs git and pre-commit (in the test extra)",
)


def git(*args, cwd: Path, env=None) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return proc.stdout


@pytest.fixture(scope="session")
def env(tmp_path_factory):
    home = tmp_path_factory.mktemp("pre-commit-home")
    environment = dict(os.environ, PRE_COMMIT_HOME=str(home), **GIT_ENV)
    environment.pop("PYTHONPATH", None)
    environment.pop("VIRTUAL_ENV", None)
    return environment


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory, env):
    """This checkout's files (tracked and new, not ignored), committed in a fresh repo."""
    repo = tmp_path_factory.mktemp("torchport-hooks")
    listed = git(
        "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT
    )
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repo / name)
    git("init", "-q", cwd=repo, env=env)
    git("add", "-A", cwd=repo, env=env)
    git("commit", "-q", "-m", "torchport", cwd=repo, env=env)
    return repo, git("rev-parse", "HEAD", cwd=repo, env=env).strip()


def make_project(tmp_path: Path, hook_repo, env, hook_id: str) -> Path:
    repo, rev = hook_repo
    project = tmp_path / "project"
    project.mkdir()
    git("init", "-q", cwd=project, env=env)
    (project / ".pre-commit-config.yaml").write_text(textwrap.dedent(f"""\
            repos:
              - repo: {repo}
                rev: {rev}
                hooks:
                  - id: {hook_id}
            """))
    (project / "README.md").write_text("cuda notes\n")
    git("add", ".pre-commit-config.yaml", "README.md", cwd=project, env=env)
    git("commit", "-q", "-m", "start", cwd=project, env=env)
    return project


def pre_commit(*args, cwd: Path, env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PRE_COMMIT, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_hook_rewrites_staged_files_fails_then_passes(tmp_path, hook_repo, env):
    project = make_project(tmp_path, hook_repo, env, "torchport")
    (project / "committed.py").write_text(CUDA)
    git("add", "committed.py", cwd=project, env=env)
    git("commit", "-q", "-m", "old code", cwd=project, env=env)
    (project / "train.py").write_text(CUDA)
    (project / "untracked.py").write_text(CUDA)
    (project / "nb.ipynb").write_bytes(
        (ROOT / "fixtures" / "notebooks" / "training.before.ipynb").read_bytes()
    )
    git("add", "train.py", "nb.ipynb", cwd=project, env=env)

    first = pre_commit("run", cwd=project, env=env)
    assert first.returncode == 1, first.stdout + first.stderr
    assert "files were modified by this hook" in first.stdout
    assert ".to(_DEVICE())" in (project / "train.py").read_text()
    expected = ROOT / "fixtures" / "notebooks" / "training.after.ipynb"
    assert (project / "nb.ipynb").read_bytes() == expected.read_bytes()
    # Only the staged files are touched.
    assert (project / "untracked.py").read_text() == CUDA
    assert (project / "committed.py").read_text() == CUDA

    git("add", "train.py", "nb.ipynb", cwd=project, env=env)
    second = pre_commit("run", cwd=project, env=env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Passed" in second.stdout


@pytest.mark.parametrize(
    "hook_id, source, reported",
    [
        # Sites torchport cannot rewrite fail the rewriting hook, file untouched.
        ("torchport", LEFT, "left.py:3:12: TP109"),
        # The check hook reports what it would rewrite and writes nothing.
        ("torchport-check", CUDA, "left.py:3:5: TP201"),
    ],
)
def test_hook_fails_on_what_is_left_and_writes_nothing(
    tmp_path, hook_repo, env, hook_id, source, reported
):
    project = make_project(tmp_path, hook_repo, env, hook_id)
    (project / "left.py").write_text(source)
    git("add", "left.py", cwd=project, env=env)
    proc = pre_commit("run", cwd=project, env=env)
    assert proc.returncode == 1
    assert reported in proc.stdout
    assert (project / "left.py").read_text() == source


def test_no_matching_files_is_skipped_not_a_crash(tmp_path, hook_repo, env):
    project = make_project(tmp_path, hook_repo, env, "torchport")
    nothing_staged = pre_commit("run", cwd=project, env=env)
    assert nothing_staged.returncode == 0, nothing_staged.stdout + nothing_staged.stderr
    assert "(no files to check)Skipped" in nothing_staged.stdout
    only_markdown = pre_commit("run", "--files", "README.md", cwd=project, env=env)
    assert only_markdown.returncode == 0
    assert "(no files to check)Skipped" in only_markdown.stdout


@pytest.mark.parametrize("hook_id", ["torchport", "torchport-check"])
def test_informational_sites_do_not_fail_the_hook(tmp_path, hook_repo, env, hook_id):
    """Backend flags run on every build: shown, but the commit goes through."""
    project = make_project(tmp_path, hook_repo, env, hook_id)
    source = "import torch\n\ntorch.backends.cudnn.benchmark = True\n"
    (project / "flags.py").write_text(source)
    git("add", "flags.py", cwd=project, env=env)
    proc = pre_commit("run", cwd=project, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (project / "flags.py").read_text() == source
