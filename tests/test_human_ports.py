"""scripts/human_ports.py: the sites a hand-made migration removed, and which of them
torchport's port removed too, on a small repository made here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import human_ports  # noqa: E402

ORIGINAL = """import torch

x = torch.ones(2).cuda()
graph = torch.cuda.CUDAGraph()
print(x.sum().item())
"""
HUMAN = """import torch

device = torch.accelerator.current_accelerator() or torch.device("cpu")
x = torch.ones(2).to(device)
print(x.sum().item())
"""


def _repository(tmp_path: Path) -> str:
    work = tmp_path / "work"
    work.mkdir()

    def git(*args):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=work,
            check=True,
            capture_output=True,
        )

    git("init", "-q")
    (work / "train.py").write_text(ORIGINAL)
    (work / "notes.txt").write_text("cuda\n")
    git("add", ".")
    git("commit", "-qm", "first")
    (work / "train.py").write_text(HUMAN)
    git("commit", "-qam", "Use the accelerator API")
    return str(work / ".git")


def test_sites_the_humans_removed_and_torchport_kept_are_listed(tmp_path):
    git_dir = _repository(tmp_path)
    (commit,) = human_ports.commits_matching(git_dir, "accelerator")
    assert human_ports.modified_python_files(git_dir, commit) == ["train.py"]
    result = human_ports.check_commit(
        git_dir, commit, human_ports.default_command(), timeout=300
    )
    # The humans removed .cuda() and the CUDA graph; torchport ports the first and
    # reports the second (a CUDA graph has no portable equivalent).
    assert (result.human, result.both, result.missed) == (2, 1, 1)
    assert result.reported == 1
    (site,) = result.missed_sites
    assert site.startswith("train.py:") and "torch.cuda.CUDAGraph" in site
    assert "no diagnostic" not in site
