"""Nothing outside the named tree is written through a linked folder named on the
command line (``ld/v.py``)."""

from __future__ import annotations

from pathlib import Path

from tests.bytes_helpers import CUDA, error_lines, hashes
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
    assert error_lines(proc.stderr) == [
        f"ld/a.py: named through a linked folder; its real path {outside / 'a.py'}"
        " is outside the paths given; not followed",
        f"fl.py: symbolic link to {outside / 'b.py'}, outside the paths given;"
        " not followed",
    ]
    assert ".to(DEVICE)" in (tree / "top.py").read_text()  # the rest processed


def test_a_file_named_through_a_folder_link_inside_the_tree_is_its_target(tmp_path):
    tree, outside = _layout(tmp_path)
    (tree / "alias").symlink_to("sub", target_is_directory=True)
    proc = run_cli(["alias/a.py"], cwd=tree)
    assert proc.returncode == 0, proc.stderr
    assert ".to(DEVICE)" in (tree / "sub" / "a.py").read_text()
    assert (tree / "alias").is_symlink()

