"""Every snippet of the README runs as written: TOML and YAML parse (and torchport
accepts the configuration), Python compiles, each `torchport ...` command line runs,
the pre-commit configuration commits through the real pre-commit, and the usage
block lists exactly the options `torchport fix --help` has."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli_helpers import ROOT, run_cli

README = (ROOT / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
CUDA = "import torch\n\nx = torch.ones(2).cuda()\nprint(x.sum().item())\n"


def blocks(language: str):
    return [body for lang, body in FENCE.findall(README) if lang == language]


def section(title: str) -> str:
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end > 0 else None]


@pytest.fixture
def torchport_on_path(tmp_path):
    """A `torchport` command for this checkout, first on PATH (as `pip install`
    would put it)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "torchport"
    launcher.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from codemod.cli import main\nmain()\n"
    )
    launcher.chmod(0o755)
    return dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_toml_blocks_parse_and_are_accepted(tmp_path):
    import tomllib

    found = blocks("toml")
    assert found
    for number, body in enumerate(found):
        tomllib.loads(body)
        project = tmp_path / f"p{number}"
        project.mkdir()
        (project / "pyproject.toml").write_text(body)
        (project / "train.py").write_text(CUDA)
        proc = run_cli(["check", "."], cwd=project)
        assert proc.returncode in (0, 1), (body, proc.stderr)


def test_python_blocks_compile():
    for body in blocks("python"):
        compile(body, "<README>", "exec")


def test_noqa_snippet_suppresses_its_sites(tmp_path):
    [snippet] = [b for b in blocks("python") if "noqa" in b]
    (tmp_path / "kept.py").write_text("import torch\n\n" + snippet)
    proc = run_cli(["check", "kept.py"], cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout


def test_yaml_blocks_parse():
    import yaml

    found = blocks("yaml")
    assert found
    for body in found:
        document = yaml.safe_load(body)
        assert "repos" in document or "jobs" in document  # pre-commit, or a workflow


def test_usage_lists_exactly_the_options_of_fix():
    usage = section("Usage")
    documented = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", usage))
    help_text = run_cli(["fix", "--help"]).stdout
    offered = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", help_text))
    offered -= {"--help", "--no-unsafe-fixes", "--format"}
    documented -= {"--help", "--version", "--all"}
    assert offered <= documented, offered - documented
    assert documented <= offered | {"--version"}, documented - offered


def _command_lines():
    for body in blocks("sh"):
        for line in body.splitlines():
            if line.startswith("torchport "):
                yield line


def test_command_lines_run_as_written(tmp_path, torchport_on_path):
    lines = list(_command_lines())
    assert any(" report " in line for line in lines)
    for line in lines:
        project = tmp_path / f"p{abs(hash(line))}"
        project.mkdir()
        (project / "train.py").write_text(CUDA)
        proc = subprocess.run(
            line,
            shell=True,
            cwd=project,
            env=torchport_on_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode in (0, 1), (line, proc.stderr)
        assert "Traceback" not in proc.stderr


PRE_COMMIT = shutil.which("pre-commit") or str(
    Path(sys.executable).parent / "pre-commit"
)


@pytest.mark.skipif(
    not Path(PRE_COMMIT).exists() or shutil.which("git") is None,
    reason="needs git and pre-commit (in the test extra)",
)
def test_pre_commit_snippet_commits_through_pre_commit(tmp_path, torchport_on_path):
    [config] = [b for b in blocks("yaml") if "repo: local" in b]
    project = tmp_path / "project"
    project.mkdir()
    env = dict(
        torchport_on_path,
        PRE_COMMIT_HOME=str(tmp_path / "cache"),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
    )

    def git(*args):
        subprocess.run(["git", *args], cwd=project, env=env, check=True)

    git("init", "-q")
    (project / ".pre-commit-config.yaml").write_text(config)
    (project / "train.py").write_text(CUDA)
    git("add", ".")
    first = subprocess.run(
        [PRE_COMMIT, "run"], cwd=project, env=env, capture_output=True, text=True
    )
    assert first.returncode == 1, first.stdout + first.stderr  # it rewrote train.py
    assert ".to(_DEVICE())" in (project / "train.py").read_text()
    git("add", ".")
    second = subprocess.run(
        [PRE_COMMIT, "run"], cwd=project, env=env, capture_output=True, text=True
    )
    assert second.returncode == 0, textwrap.shorten(second.stdout, 2000)
