"""scripts/benchmark.py and scripts/fetch_corpus.py, run for real on small inputs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import GIT_ENV, ROOT

SCRIPTS = ROOT / "scripts"
SUMMARY_KEYS = [
    "folders",
    "py_files",
    "cuda_files",
    "torchport_s",
    "floor_s",
    "torchport/floor",
    "nocuda_s",
    "grep+startup_s",
    "nocuda/(grep+startup)",
    "typical_file_s",
    "largest_file_s",
    "peak_rss_mib",
    "repeats",
]


def _script(name: str, *args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPTS / name), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,  # a hang guard, not a speed limit
    )


@pytest.mark.skipif(shutil.which("grep") is None, reason="needs grep")
def test_benchmark_prints_one_summary_line_with_every_figure(tmp_path):
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "train.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    (project / "pkg" / "model.py").write_text(
        "import torch\n\ndef f(x):\n    return x.cuda()\n\n\ny = f(torch.ones(3))\n"
    )
    (project / "pkg" / "plain.py").write_text("print(1)\n")
    proc = _script(
        "benchmark.py", "--repeats", "1", "--nocuda-files", "3", str(project)
    )
    assert proc.returncode == 0, proc.stderr
    summaries = [line for line in proc.stdout.splitlines() if "summary" in line]
    assert len(summaries) == 1 and proc.stdout.splitlines()[-1] == summaries[0]
    fields = dict(
        re.fullmatch(r"(\S+)=(\S+)", field).groups()
        for field in summaries[0].split()[1:]
    )
    assert list(fields) == SUMMARY_KEYS
    assert (fields["folders"], fields["py_files"], fields["cuda_files"]) == (
        "1",
        "3",
        "2",
    )
    for key in SUMMARY_KEYS[3:-1]:
        assert float(fields[key]) > 0, key
    assert "typical file (" in proc.stdout and "model.py" in proc.stdout


@pytest.mark.skipif(shutil.which("grep") is None, reason="needs grep")
def test_benchmark_times_a_baseline_command_alike(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    baseline = f"{sys.executable} -m codemod"
    proc = _script(
        "benchmark.py",
        "--repeats",
        "1",
        "--nocuda-files",
        "2",
        "--baseline",
        baseline,
        str(project),
    )
    assert proc.returncode == 0, proc.stderr
    fields = dict(
        re.fullmatch(r"(\S+)=(\S+)", field).groups()
        for field in proc.stdout.splitlines()[-1].split()[1:]
    )
    assert list(fields) == SUMMARY_KEYS + [
        "baseline_s",
        "torchport/baseline",
        "nocuda_torchport/baseline",
    ]
    assert float(fields["baseline_s"]) > 0 and float(fields["torchport/baseline"]) > 0
    assert "| baseline s |" in proc.stdout


def _git(*args, cwd: Path) -> str:
    env = dict(os.environ, **GIT_ENV)
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_fetch_corpus_checks_out_the_pinned_commit_only(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import fetch_corpus

    origin = tmp_path / "mirror" / "owner" / "repo"
    (origin / "examples").mkdir(parents=True)
    (origin / "src").mkdir()
    (origin / "examples" / "train.py").write_text("pinned\n")
    (origin / "src" / "lib.py").write_text("outside the subdir\n")
    _git("init", "-q", cwd=origin)
    _git("add", "-A", cwd=origin)
    _git("commit", "-q", "-m", "pinned", cwd=origin)
    pinned = _git("rev-parse", "HEAD", cwd=origin)
    (origin / "examples" / "train.py").write_text("newer\n")
    _git("commit", "-q", "-am", "newer", cwd=origin)
    project = fetch_corpus.Project("repo", "owner/repo", pinned, subdir="examples")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    url = (tmp_path / "mirror").as_uri() + "/{repo}"
    corpus = tmp_path / "corpus"
    for _ in range(2):  # the second run finds it at its commit and leaves it
        target = fetch_corpus.fetch(project, corpus, url, dry_run=False)
        assert target == corpus / "repo" / "examples"
        assert (target / "train.py").read_text() == "pinned\n"
        assert not (corpus / "repo" / "src").exists()
        assert _git("rev-parse", "HEAD", cwd=corpus / "repo") == pinned
    assert _git("rev-list", "--count", "HEAD", cwd=corpus / "repo") == "1"  # shallow
    assert len(fetch_corpus.CORPUS) == 17
    assert all(re.fullmatch("[0-9a-f]{40}", p.commit) for p in fetch_corpus.CORPUS)
