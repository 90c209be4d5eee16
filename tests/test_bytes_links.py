"""Nothing outside the named tree is written through a linked folder: one named on
the command line (``ld/v.py``), or one a folder became during the run (as a
``git checkout`` that turns ``sub/`` into a link to ``../outside`` does)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codemod.model.options import Options
from codemod.run import pool
from codemod.run.files import discover
from codemod.run.io import FileChangedError, read_regular, write_atomic
from codemod.run.job import WRITE, Job
from codemod.run.process import process_source
from tests.bytes_helpers import CUDA, error_lines, hashes, run_with_hook
from tests.cli_helpers import run_cli


def _layout(tmp_path: Path):
    """tree/ with sub/a.py and sub/b.py, and outside/ beside it with the same
    names: a link from the tree to outside/ leads to files the run must not touch."""
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    (tree / "sub").mkdir(parents=True)
    outside.mkdir()
    for name in ("a.py", "b.py"):
        (tree / "sub" / name).write_text(CUDA)
        (outside / name).write_text(CUDA)
    (tree / "top.py").write_text(CUDA)
    return tree, outside


def test_a_file_named_through_a_linked_folder_is_refused_like_a_file_link(tmp_path):
    tree, outside = _layout(tmp_path)
    (tree / "ld").symlink_to("../outside", target_is_directory=True)
    (tree / "fl.py").symlink_to("../outside/b.py")
    before = hashes(outside)
    proc = run_cli(["ld/a.py", "fl.py", "top.py"], cwd=tree)
    assert proc.returncode == 2, proc.stderr
    assert hashes(outside) == before
    # in the order of their paths, as every record is
    assert error_lines(proc.stderr) == [
        f"fl.py: symbolic link to {outside / 'b.py'}, outside the paths given;"
        " not followed",
        f"ld/a.py: named through a linked folder; its real path {outside / 'a.py'}"
        " is outside the paths given; not followed",
    ]
    assert ".to(_DEVICE())" in (tree / "top.py").read_text()  # the rest processed


def test_a_file_named_through_a_folder_link_inside_the_tree_is_its_target(tmp_path):
    tree, outside = _layout(tmp_path)
    (tree / "alias").symlink_to("sub", target_is_directory=True)
    proc = run_cli(["alias/a.py"], cwd=tree)
    assert proc.returncode == 0, proc.stderr
    assert ".to(_DEVICE())" in (tree / "sub" / "a.py").read_text()
    assert (tree / "alias").is_symlink()


# Swap tree/sub for a link to ../outside, as a checkout that makes it one does.
SWAP = (
    "import os, shutil\n"
    "if not os.path.islink('sub'):\n"
    "    os.rename('sub', '../moved')\n"
    "    os.symlink('../outside', 'sub')\n"
)


def test_a_folder_swapped_for_a_link_before_its_files_are_read(tmp_path):
    tree, outside = _layout(tmp_path)
    before = hashes(outside)
    proc = run_with_hook(["."], tree, "discovered", SWAP)
    assert (tree / "sub").is_symlink()  # the swap did happen
    assert proc.returncode == 2, proc.stderr
    assert hashes(outside) == before
    assert sorted(error_lines(proc.stderr)) == [
        f"sub/{name}: folder {tree / 'sub'} on its path is a symbolic link now;"
        " not read"
        for name in ("a.py", "b.py")
    ]
    assert ".to(_DEVICE())" in (tree / "top.py").read_text()


def test_a_folder_swapped_for_a_link_between_read_and_write(tmp_path):
    tree, outside = _layout(tmp_path)
    before = hashes(outside)
    hook = "if 'sub' in str(args[0]):\n" + "".join(
        "    " + line + "\n" for line in SWAP.splitlines()
    )
    proc = run_with_hook(["--jobs", "1", "."], tree, "rewritten", hook)
    assert (tree / "sub").is_symlink()
    assert proc.returncode == 2, proc.stderr
    assert hashes(outside) == before
    moved = tmp_path / "moved"
    errors = error_lines(proc.stderr)
    # a.py was read before the swap: its folder moved away from under it; b.py
    # is reached after it, through the link, and refused
    assert errors == [
        f"sub/a.py: folder {tree / 'sub'} on its path was moved or replaced while"
        " torchport was running; not written",
        f"sub/b.py: folder {tree / 'sub'} on its path is a symbolic link now;"
        " not read",
    ], proc.stderr
    assert (moved / "a.py").read_text() == CUDA  # the file read: not written either
    assert ".to(_DEVICE())" in (tree / "top.py").read_text()


def test_write_atomic_rechecks_the_folder_right_before_the_rename(tmp_path):
    """The same, one file, in this process: its folder pinned when it is read, then
    renamed away and a link put in its place before the write."""
    from codemod.run.files import found
    from codemod.run.pinned import Folder

    tree, outside = _layout(tmp_path)
    target = tree / "sub" / "a.py"
    with Folder(target) as folder:
        data, before = read_regular(folder.name, dir_fd=folder.fd)
        output = process_source(str(target), data, Job(WRITE, Options(), False)).output
        os.rename(tree / "sub", tmp_path / "moved")
        (tree / "sub").symlink_to("../outside", target_is_directory=True)
        with pytest.raises(FileChangedError, match="was moved or replaced"):
            write_atomic(target, output, data, before, folder)
    # and without the pinned folder, from the real path recorded before the swap
    found_before = found(target, str(tmp_path / "tree" / "sub" / "a.py"))
    with pytest.raises(FileChangedError, match="is a symbolic link now"):
        write_atomic(found_before, output, data, before)
    assert (outside / "a.py").read_text() == CUDA
    assert (tmp_path / "moved" / "a.py").read_text() == CUDA


def test_the_pool_reads_nothing_through_a_folder_swapped_after_discovery(tmp_path):
    tree, outside = _layout(tmp_path)
    files, errors = discover([str(tree)])
    assert errors == [] and len(files) == 3
    os.rename(tree / "sub", tmp_path / "moved")
    (tree / "sub").symlink_to("../outside", target_is_directory=True)
    results = pool.run(files, Job(WRITE, Options(), False), jobs=1)
    by_name = {Path(r.path).name: r for r in results}
    for name in ("a.py", "b.py"):
        assert by_name[name].error.endswith(
            "on its path is a symbolic link now; not read"
        ), by_name[name]
    assert by_name["top.py"].written
    assert hashes(outside) == {
        name: ("file", hashes(tmp_path / "moved")[name][1]) for name in ("a.py", "b.py")
    }
