"""The migration report is written whole or not at all, as source files are: a disk
that fills up (here, a file size limit) leaves the previous report as it was, and
says so on one line."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from tests.cli_helpers import CUDA, ROOT

OLD = "# the previous report\n"
LIMIT = 1024  # bytes: the rewritten source fits, the report does not


def _limited(args, cwd):
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    return subprocess.run(
        [sys.executable, "-m", "codemod", *args],
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1"),
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limit,
    )


@pytest.mark.parametrize("name", ["old.md", "old.html"])
@pytest.mark.parametrize("command", ["fix", "report"])
def test_a_report_that_cannot_be_written_leaves_the_old_one(tmp_path, name, command):
    (tmp_path / "a.py").write_text(CUDA)
    report = tmp_path / name
    report.write_text(OLD)
    args = ["fix", "--report", name, "a.py"] if command == "fix" else []
    args = args or ["report", "a.py", "-o", name]
    proc = _limited(args, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"cannot write the report {name}: File too large" in proc.stderr
    assert "(the previous one is as it was)" in proc.stderr
    assert report.read_text() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", name]
    if command == "fix":
        assert "1 file was rewritten all the same" in proc.stderr
        assert ".to(_DEVICE())" in (tmp_path / "a.py").read_text()


def _report(tmp_path, name="r.md"):
    proc = subprocess.run(
        [sys.executable, "-m", "codemod", "report", ".", "-o", name],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc, (tmp_path / name).read_text()


def test_names_cannot_break_out_of_the_markdown_tables(tmp_path):
    (tmp_path / "x|y\n| forged | row |.py").write_text(CUDA)
    (tmp_path / "[link](http:evil)*em*.py").write_text(
        CUDA + 'DEVICES = ["cuda", "cpu"]\n'
    )
    _, text = _report(tmp_path)
    assert not any(line.startswith("| forged") for line in text.splitlines())
    assert "| `x\\|y\\n\\| forged \\| row \\|.py` | 1 | TP201 |" in text
    # In a code span, where Markdown reads nothing: no link, no emphasis.
    assert "- `[link](http:evil)*em*.py:5:12`: hard-coded" in text


def test_suppressed_counts_the_sites_a_noqa_keeps(tmp_path):
    (tmp_path / "a.py").write_text(
        "import torch\n"
        "x = torch.ones(2).cuda()  # noqa: TP201\n"  # suppresses a site
        "y = 1  # noqa: TP201\n"  # nothing to suppress
        "z = torch.ones(2).cuda()  # noqa: TP999, E501\n"  # no such rule
        "w = torch.ones(2).cuda()  # noqa\n"  # every code on its line
    )
    proc, text = _report(tmp_path)
    assert "| TP2xx Tensor and module methods | 1 | 0 | 0 | 2 |" in text
    assert "0 informational, 2 suppressed" in proc.stderr
