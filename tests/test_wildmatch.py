"""Gitignore patterns match as git matches them (``git check-ignore`` is the
oracle), and ignore files rank as git ranks them."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from codemod.run.wildmatch import parse_lines, path_verdict
from tests.cli_helpers import CUDA, GIT_ENV, run_cli

PATTERNS = [
    "*.py",
    "a/*.py",
    "/a",
    "a/",
    "**/b",
    "a/**",
    "a/**/b",
    "*a*a*b",
    "[ab]*",
    "[!a]*",
    "[^a]*",
    "[a-c]x",
    "?.py",
    "b/c/",
    "x/**/",
    "\\#h",
    "\\!n",
    "[[:digit:]]*",
    "[[:alpha:]][[:upper:]]",
    "*.p[yx]",
    "a*b/c",
    "**",
    "**/a/**",
    "foo/*/bar",
    "a?c",
    "[]]x",
    "[z-a]",
    "[a",
    "d**e",
    "a\\*",
    "trail\\ ",
    "[[:nope:]]",
    "*/",
    "/*/b",
    "aa*aa",
    "**/x/y",
]
PATHS = [
    "a",
    "a.py",
    "b",
    "a/b",
    "a/b/c",
    "a/x.py",
    "x/a",
    "x/a/b",
    "x/b",
    "b/c",
    "b/c/d",
    "aab",
    "abab",
    "#h",
    "!n",
    "1x",
    "bx",
    "cx",
    "dx",
    "ab/c",
    "axb/c",
    "foo/q/bar",
    "foo/bar",
    "foo/q/r/bar",
    "abc",
    "]x",
    "z",
    "a/a/a",
    "deee",
    "de",
    "x/y/z.py",
    "aaaaab",
    "a*",
    "aX",
    "trail ",
    "aaa",
    "aaaa",
    "q/x/y",
    "x/y",
]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("pattern", PATTERNS)
def test_patterns_match_as_git_matches_them(tmp_path, pattern):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text(pattern + "\n")
    compiled = parse_lines([pattern])
    for is_dir in (False, True):
        asked = "".join(p + ("/" if is_dir else "") + "\n" for p in PATHS)
        proc = subprocess.run(
            ["git", "check-ignore", "--no-index", "--stdin"],
            cwd=tmp_path,
            input=asked,
            capture_output=True,
            text=True,
            env={**os.environ, **GIT_ENV},
        )
        by_git = {line.rstrip("/") for line in proc.stdout.splitlines()}
        for path in PATHS:
            mine = bool(path_verdict(compiled, path, is_dir))
            if is_dir and pattern.endswith("/**") and not mine:
                # git asked about "a/" matches "a/**"; the walk asks about "a",
                # then finds all it holds ignored
                mine = bool(path_verdict(compiled, path + "/x", False))
            assert mine == (path in by_git), (pattern, path, is_dir)


def test_negation_and_a_folder_on_the_way():
    patterns = parse_lines(["/*", "!/foo", "/foo/*", "!/foo/bar", "*.log", "!k.log"])
    assert path_verdict(patterns, "foo/bar/x.py", False) is None
    assert path_verdict(patterns, "foo/baz/x.py", False) is True  # its folder
    assert path_verdict(patterns, "other", True) is True
    assert path_verdict(patterns, "foo/bar/k.log", False) is False
    assert path_verdict(patterns, "foo/bar/j.log", False) is True


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_deeper_ignore_file_wins_over_one_above(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("kept.py\n")
    (tmp_path / ".gitignore").write_text("*.py\n!kept.py\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("!back.py\n")
    for name in ("kept.py", "gone.py", "sub/back.py", "sub/gone.py"):
        (tmp_path / name).write_text(CUDA)
    proc = run_cli(["check", "--show-files", "."], cwd=tmp_path)
    assert proc.stdout.splitlines() == ["kept.py", os.path.join("sub", "back.py")]
