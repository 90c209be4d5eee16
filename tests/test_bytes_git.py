"""A repository is untrusted input: git's data never runs a program for torchport,
never leads it out of the tree, and a broken pointer only means no git data.

Each attack is first shown to be live (git itself runs the program, or the index
names the outside file); then torchport runs on the tree, and every file inside
and outside the tree is hashed around it: only the tree's own tracked file
changes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import struct
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

from codemod.run.repository import read_index
from tests.bytes_helpers import CUDA, error_lines, hashes, run_with_hook
from tests.cli_helpers import GIT_ENV, run_cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(cwd: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV, **extra},
        capture_output=True,
        check=True,
    )


@pytest.fixture
def layout(tmp_path):
    """tmp/tree, a repository tracking a.py and sub/b.py; tmp/outside/victim.py;
    tmp/marker is what a hostile program would write."""
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    (tree / "sub").mkdir(parents=True)
    outside.mkdir()
    (tree / "a.py").write_text(CUDA)
    (tree / "sub" / "b.py").write_text(CUDA)
    (outside / "victim.py").write_text(CUDA)
    _git(tree, "init", "-q")
    _git(tree, "add", "a.py", "sub/b.py")
    program = tmp_path / "evil.sh"
    program.write_text(f"#!/bin/sh\necho ran >> {tmp_path / 'marker'}\nexit 0\n")
    program.chmod(0o755)
    return tree, outside, program, tmp_path / "marker"


def _everything(tmp_path: Path):
    return hashes(tmp_path)


def _assert_only_the_tree_changed(before, after, changed=("tree/a.py",)):
    """Every entry outside ``tree/`` is as it was; inside, only ``changed``."""
    differ = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert differ == set(changed), sorted(differ)


def _config(tree: Path, text: str) -> None:
    with open(tree / ".git" / "config", "a") as config:
        config.write(text)


# -- 1. git runs no program for torchport --------------------------------------------
HOSTILE_CONFIGS = {
    "fsmonitor": "[core]\n\tfsmonitor = {program}\n",
    "hooks": "[core]\n\thooksPath = {hooks}\n",
    "filter": '[filter "evil"]\n\tclean = {program}\n\tsmudge = {program}\n'
    "\tprocess = {program}\n",
    "pager and editor": "[core]\n\tpager = {program}\n\teditor = {program}\n"
    "\tsshCommand = {program}\n\taskPass = {program}\n",
}


def _arm(name: str, tree: Path, program: Path) -> None:
    hooks = tree.parent / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in ("post-index-change", "pre-commit", "post-checkout"):
        shutil.copy(program, hooks / hook)
    _config(tree, HOSTILE_CONFIGS[name].format(program=program, hooks=hooks))
    (tree / ".gitattributes").write_text("*.py filter=evil\n")


@pytest.mark.parametrize("name", sorted(HOSTILE_CONFIGS))
def test_a_hostile_git_config_runs_nothing(layout, name):
    tree, outside, program, marker = layout
    _arm(name, tree, program)
    if name == "fsmonitor":  # the attack is live: git itself runs the program
        _git(tree, "status", "--porcelain")
        assert marker.exists()
        marker.unlink()
    before = _everything(tree.parent)
    proc = run_cli(["fix", "."], cwd=tree)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), "a program from .git/config ran"
    _assert_only_the_tree_changed(
        before, _everything(tree.parent), ("tree/a.py", "tree/sub/b.py")
    )


def test_a_nested_repository_and_one_above_run_nothing(layout):
    tree, outside, program, marker = layout
    _config(tree, f"[core]\n\tfsmonitor = {program}\n")  # the one above "sub"
    nested = tree / "vendor"
    nested.mkdir()
    (nested / "v.py").write_text(CUDA)
    _git(nested, "init", "-q")
    _git(nested, "add", "v.py")
    with open(nested / ".git" / "config", "a") as config:
        config.write(f"[core]\n\tfsmonitor = {program}\n")
    proc = run_cli(["fix", "sub", "."], cwd=tree)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    assert ".to(_DEVICE())" in (nested / "v.py").read_text()


def test_git_variables_of_the_environment_are_ignored(layout, tmp_path):
    tree, outside, program, marker = layout
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "sub").mkdir(parents=True)
    (elsewhere / "sub" / "victim.py").write_text(CUDA)
    index = _hostile_index(tmp_path, ["../outside/victim.py"])
    before = _everything(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "codemod", "fix", "."],
        cwd=tree,
        env={
            **os.environ,
            "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "core.fsmonitor",
            "GIT_CONFIG_VALUE_0": str(program),
            "GIT_DIR": str(elsewhere / ".git"),
            "GIT_WORK_TREE": str(elsewhere),
            "GIT_INDEX_FILE": str(index),
            "GIT_EXTERNAL_DIFF": str(program),
        },
        capture_output=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    _assert_only_the_tree_changed(
        before, _everything(tmp_path), ("tree/a.py", "tree/sub/b.py")
    )


# -- 2. paths in the index that lead out of the tree -----------------------------------
def _index(entries: List[Tuple[str, int]], version: int = 2) -> bytes:
    """A git index (version 2 or 4) with ``entries`` (path, mode), SHA-1 names."""
    body, previous = b"", b""
    for path, mode in entries:
        name = os.fsencode(path)
        fixed = struct.pack(">10I", 0, 0, 0, 0, 0, 0, mode, 0, 0, 0)
        fixed += b"\x11" * 20 + struct.pack(">H", min(len(name), 0xFFF))
        if version == 4:
            common = len(os.path.commonprefix([previous, name]))
            strip = len(previous) - common
            body += fixed + _varint(strip) + name[common:] + b"\0"
        else:
            size = len(fixed) + len(name)
            body += fixed + name + b"\0" * (8 - size % 8)
        previous = name
    data = b"DIRC" + struct.pack(">II", version, len(entries)) + body
    return data + hashlib.sha1(data).digest()


def _varint(value: int) -> bytes:
    """git's offset varint (varint.c)."""
    out = [value & 0x7F]
    value >>= 7
    while value:
        value -= 1
        out.insert(0, 0x80 | (value & 0x7F))
        value >>= 7
    return bytes(out)


def _hostile_index(folder: Path, paths: List[str]) -> Path:
    index = folder / "hostile-index"
    index.write_bytes(_index([(p, 0o100644) for p in paths]))
    return index


def test_the_index_is_read_as_git_writes_it(layout):
    tree, *_ = layout
    (tree / "c.py").write_text(CUDA)
    _git(tree, "add", "c.py")
    assert read_index((tree / ".git" / "index").read_bytes()) == [
        ("a.py", 0o100644),
        ("c.py", 0o100644),
        ("sub/b.py", 0o100644),
    ]
    _git(tree, "update-index", "--index-version", "4")
    assert [p for p, _ in read_index((tree / ".git" / "index").read_bytes())] == [
        "a.py",
        "c.py",
        "sub/b.py",
    ]
    names = ["a.py", "aa/b.py", "aa/bb/c.py", "z.py"]
    for version in (2, 4):
        entries = [(n, 0o100644) for n in names]
        assert read_index(_index(entries, version)) == entries


@pytest.mark.parametrize("version", [2, 4])
def test_an_index_naming_files_outside_the_tree_touches_nothing_there(layout, version):
    tree, outside, _, _ = layout
    victim = outside / "victim.py"
    paths = [
        "../outside/victim.py",
        str(victim),  # an absolute path
        "sub/../../outside/victim.py",
        "/" * 3000 + "x.py",
        "a.py",
        "sub/b.py",
        "gone/x.py",
    ]
    (tree / ".gitignore").write_text("*.py\n")  # only what the index tracks
    entries = [(p, 0o100644) for p in paths]
    (tree / ".git" / "index").write_bytes(_index(entries, version))
    before = _everything(tree.parent)
    proc = run_cli(["fix", "--show-files", "."], cwd=tree)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["a.py", os.path.join("sub", "b.py")]
    proc = run_cli(["fix", "."], cwd=tree)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    _assert_only_the_tree_changed(
        before, _everything(tree.parent), ("tree/a.py", "tree/sub/b.py")
    )


def test_a_tracked_folder_that_is_a_link_is_not_followed(layout):
    tree, outside, _, _ = layout
    shutil.rmtree(tree / "sub")
    (tree / "sub").symlink_to("../outside", target_is_directory=True)
    (tree / ".git" / "index").write_bytes(
        _index([("a.py", 0o100644), ("sub/victim.py", 0o100644)])
    )
    before = _everything(tree.parent)
    proc = run_cli(["fix", "."], cwd=tree)
    assert proc.returncode == 0, proc.stderr
    _assert_only_the_tree_changed(before, _everything(tree.parent))


@pytest.mark.parametrize(
    "data",
    [b"", b"DIRC", b"DIRC\0\0\0\x09\0\0\0\x01", b"DIRC\0\0\0\x02\0\0\xff\xff" + b"x"],
    ids=["empty", "short", "version 9", "truncated"],
)
def test_an_index_that_is_no_index_is_as_good_as_none(layout, data):
    tree, *_ = layout
    (tree / ".git" / "index").write_bytes(data)
    proc = run_cli(["fix", "."], cwd=tree)
    assert proc.returncode == 0, proc.stderr
    assert ".to(_DEVICE())" in (tree / "sub" / "b.py").read_text()


# -- 3. folders found through git are pinned -------------------------------------------
SWAP = (
    "import os\n"
    "if not os.path.islink('sub'):\n"
    "    os.rename('sub', '../moved')\n"
    "    os.symlink('../outside', 'sub')\n"
)


def test_a_tracked_folder_swapped_for_a_link_during_the_run(layout):
    tree, outside, _, _ = layout
    (outside / "b.py").write_text(CUDA)
    (tree / ".gitignore").write_text("sub/\n")  # found only through the index
    before = hashes(outside)
    proc = run_with_hook(["."], tree, "discovered", SWAP)
    assert (tree / "sub").is_symlink()  # the swap did happen
    assert proc.returncode == 2, proc.stderr
    assert hashes(outside) == before
    assert error_lines(proc.stderr) == [
        f"sub/b.py: folder {tree / 'sub'} on its path is a symbolic link now;"
        " not read"
    ]
    assert ".to(_DEVICE())" in (tree / "a.py").read_text()


# -- 4. a .git pointer that leads nowhere ----------------------------------------------
@pytest.mark.parametrize(
    "pointer",
    [b"gitdir: /nonexistent\n", b"gitdir: ../elsewhere\n", b"garbage", b"", b"\xff"],
)
def test_a_git_pointer_that_leads_nowhere_falls_back_to_the_walk(tmp_path, pointer):
    (tmp_path / ".git").write_bytes(pointer)
    (tmp_path / ".gitignore").write_text("skipped.py\n")
    (tmp_path / "a.py").write_text(CUDA)
    (tmp_path / "skipped.py").write_text(CUDA)
    proc = run_cli(["fix", "."], cwd=tmp_path)
    assert proc.returncode == 0 and error_lines(proc.stderr) == [], proc.stderr
    assert ".to(_DEVICE())" in (tmp_path / "a.py").read_text()
    assert (tmp_path / "skipped.py").read_text() == CUDA


def test_a_linked_work_tree_reads_its_own_index(layout, tmp_path):
    tree, *_ = layout
    _git(tree, "commit", "-q", "-m", "x")
    linked = tmp_path / "linked"
    _git(tree, "worktree", "add", "-q", str(linked))
    assert (linked / ".git").is_file()
    (linked / ".gitignore").write_text("*.py\n")
    proc = run_cli(["check", "--show-files", "."], cwd=linked)
    assert proc.stdout.splitlines() == ["a.py", os.path.join("sub", "b.py")]


def test_a_pointer_file_that_is_a_pipe_is_no_pointer(tmp_path):
    os.mkfifo(tmp_path / ".git")
    assert stat.S_ISFIFO(os.lstat(tmp_path / ".git").st_mode)
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["fix", "."], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ".to(_DEVICE())" in (tmp_path / "a.py").read_text()
