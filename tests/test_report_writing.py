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
        assert ".to(DEVICE())" in (tmp_path / "a.py").read_text()
