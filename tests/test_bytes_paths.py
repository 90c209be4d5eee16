"""Folders and paths the system will not let torchport use are one line each, and
the rest of the run goes on: a folder that can be listed but not entered (read
permission without the search bit, as a normal user), a path longer than the
system takes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from codemod.run.files import discover
from tests.bytes_helpers import (
    CUDA,
    HANG_GUARD_S,
    chown_tree,
    environment,
    error_lines,
    normal_user,
)
from tests.cli_helpers import run_cli


def test_a_folder_listed_but_not_entered_is_one_line(reachable_tmp):
    prefix, uid, gid = normal_user()
    tree = reachable_tmp / "tree"
    (tree / "locked" / "inner").mkdir(parents=True)
    (tree / "locked" / "a.py").write_text(CUDA)
    (tree / "ok.py").write_text(CUDA)
    chown_tree(tree, uid, gid)
    (tree / "locked").chmod(0o444)  # r--: its names can be read, nothing in it
    try:
        proc = subprocess.run(
            [*prefix, sys.executable, "-m", "codemod", "."],
            cwd=tree,
            env=environment(),
            capture_output=True,
            text=True,
            timeout=HANG_GUARD_S,
        )
    finally:
        (tree / "locked").chmod(0o755)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert error_lines(proc.stderr) == [
        "locked: cannot enter folder: Permission denied"
    ]
    assert ".to(_DEVICE())" in (tree / "ok.py").read_text()
    assert (tree / "locked" / "a.py").read_text() == CUDA


def _deep_folder(base: Path, depth: int) -> Path:
    """base/d.../d... ``depth`` folders of 200-character names, made relative to an
    open folder each time (the path itself is too long for the system)."""
    name = "d" * 200
    fd = os.open(base, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
        target = os.open("x.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(target, CUDA.encode())
        os.close(target)
    finally:
        os.close(fd)
    return base.joinpath(*[name] * depth)


def test_a_path_longer_than_the_system_takes_is_one_line(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "ok.py").write_text(CUDA)
    deep = _deep_folder(tree, 25)  # 25 x 201 bytes: over 4,096
    proc = run_cli(["."], cwd=tree)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(error_lines(proc.stderr)) == 1, proc.stderr.replace("d" * 200, "D")
    [line] = error_lines(proc.stderr)
    assert "path longer than the system allows" in line, line
    assert line.endswith("folder not searched")
    assert ".to(_DEVICE())" in (tree / "ok.py").read_text()
    assert len(os.fsencode(deep)) > 4096


def test_a_named_path_longer_than_the_system_takes_is_one_line(tmp_path):
    # Discovery's part; the command line also looks for a pyproject.toml above it.
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "ok.py").write_text(CUDA)
    long = "/".join(["d" * 200] * 25) + "/x.py"
    files, errors = discover([str(tree / "ok.py"), str(tree / long)])
    assert files == [tree / "ok.py"]
    [line] = errors
    assert line.startswith(f"{tree / long}: path longer than the system allows (")
    assert line.endswith("; not processed")
