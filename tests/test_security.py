"""torchport reads code, never runs it; writes only what it was given; and file
names cannot forge lines in its output."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codemod.model.diagnostic import Diagnostic
from codemod.output.github import render_github
from codemod.output.text import render_text
from tests.cli_helpers import record_lines, run_cli

CUDA = "import torch\n\nx = torch.ones(2).cuda()\n"
LEFT = 'import torch\n\nDEVICES = ["cuda", "cpu"]\n'


def _snapshot(folder: Path):
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
    }


@pytest.mark.parametrize(
    "mode", [[], ["--diff"], ["--check"]], ids=["write", "diff", "check"]
)
def test_never_imports_or_runs_the_code_it_reads(tmp_path, mode):
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    marker = tmp_path / "MARKER"
    payload = (
        f"import torch\nopen({str(marker)!r}, 'a').write(__name__)\n"
        "x = torch.ones(2).cuda()\n"
    )
    # top-level code, package init, and modules named like torchport's own imports
    for name in (
        "evil.py",
        "pkg/__init__.py",
        "setup.py",
        "conftest.py",
        "black.py",
        "libcst.py",
        "click.py",
        "pathspec.py",
        "codemod.py",
        "torch.py",
    ):
        (tree / name).write_text(payload)
    (tree / "pyproject.toml").write_text("[tool.torchport]\ntarget-torch = '2.6'\n")
    proc = run_cli([*mode, str(tree)], cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    assert not marker.exists(), marker.read_text()


def test_writes_nothing_outside_the_given_paths(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "lib.py").write_text(CUDA)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "own.py").write_text(CUDA)
    (tree / "linked_dir").symlink_to(outside, target_is_directory=True)
    (tree / "linked_file.py").symlink_to(outside / "lib.py")
    temp = tmp_path / "tmp"
    temp.mkdir()
    before = _snapshot(outside)
    env_tmp = {"TMPDIR": str(temp), "TEMP": str(temp), "TMP": str(temp)}
    old = {k: os.environ.get(k) for k in env_tmp}
    os.environ.update(env_tmp)
    try:
        proc = run_cli([str(tree)], cwd=tree)
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    assert proc.returncode == 0, proc.stderr
    assert ".to(_DEVICE())" in (tree / "own.py").read_text()
    assert _snapshot(outside) == before  # symbolic links were not followed
    assert list(temp.iterdir()) == []  # no temporary files elsewhere
    assert sorted(p.name for p in tree.iterdir()) == [
        "linked_dir",
        "linked_file.py",
        "own.py",
    ]


EVIL = "ev\nil::error file=x.py,line=1::pwned%0A,x\r.py"


@pytest.fixture()
def evil_tree(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / EVIL).write_text(LEFT)
    (tree / ("cuda" + EVIL)).write_text(CUDA)
    (tree / ("bad" + EVIL)).write_text("x = torch.cuda(\n")
    return tree


def test_github_annotations_cannot_be_forged(evil_tree):
    proc = run_cli(
        ["--check", "--output-format", "github", str(evil_tree)], cwd=evil_tree
    )
    lines = proc.stdout.splitlines()
    # A site is a warning, the file that does not parse an error: one line each.
    assert lines and all(
        line.startswith(
            ("::warning title=torchport TP", "::error title=torchport parse-error,")
        )
        for line in lines
    )
    # the file property is escaped: ',' ':' '%' and line breaks cannot end it
    assert any(
        "ev%0Ail%3A%3Aerror file=x.py%2Cline=1%3A%3Apwned%250A%2Cx%0D.py,line=" in line
        for line in lines
    ), lines
    for line in proc.stderr.splitlines():
        assert not line.startswith("::"), line


def test_text_output_and_errors_cannot_be_forged(evil_tree):
    proc = run_cli(["--check", str(evil_tree)], cwd=evil_tree)
    for line in proc.stdout.splitlines():
        assert line.startswith(str(evil_tree)), line
    errors = record_lines(proc.stderr)
    assert len(errors) == 1 and errors[0].startswith(f"{evil_tree}/bad"), errors
    assert "\\n" in errors[0] and "\\r" in errors[0]


def test_diff_headers_cannot_be_forged(evil_tree):
    proc = run_cli(["--diff", str(evil_tree)], cwd=evil_tree)
    headers = [
        line for line in proc.stdout.splitlines() if line.startswith(("---", "+++"))
    ]
    assert len(headers) == 2, proc.stdout
    for line in proc.stdout.splitlines():  # diff lines, then diagnostics
        assert line[:1] in ("-", "+", " ", "@", "\\") or line.startswith(str(evil_tree))


def test_renderers_escape_line_breaks_and_separators():
    d = Diagnostic("a\nb::c,d%e\r.py", 1, 2, "TP101", "n", "m\nx", "safe")
    assert render_text([d]) == "a\\nb::c,d%e\\r.py:1:2: TP101 m\\nx\n"
    assert render_github([d]) == (
        "::warning title=torchport TP101,file=a%0Ab%3A%3Ac%2Cd%25e%0D.py,line=1,col=2"
        "::TP101 m%0Ax\n"
    )


# -- error lines and terminal escapes ------------------------------------------------
WORKFLOW = "::error file=n1.py,line=1::FORGED.py"
ESCAPES = "x\x1b[2K\x1b[1A\x1b[2Kforged.py"
SEPARATORS = "a\u2028b\x0bc\x0cd\x85e.py"
RAW_CONTROLS = ("\x1b", "\x0b", "\x0c", "\u2028", "\x85")


@pytest.fixture()
def forging_tree(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in (WORKFLOW, ESCAPES, SEPARATORS):
        (tree / name).write_text("x = torch.cuda(\n")  # an error line
        (tree / ("ok" + name)).write_text(CUDA)  # a diagnostic line
        (tree / ("left" + name)).write_text(LEFT)
    return tree


@pytest.mark.parametrize(
    "flags",
    [
        ["--output-format", "github", "--check"],
        ["--check"],
        ["--diff"],
        ["--show-fixes"],
    ],
    ids=["github", "text", "diff", "show-fixes"],
)
def test_no_file_name_forges_a_command_or_a_record(forging_tree, flags):
    proc = run_cli([*flags, "."], cwd=forging_tree)
    assert proc.returncode == 2, proc.stderr
    for stream in (proc.stdout, proc.stderr):
        # no raw control character; every record still on its own line
        assert not any(c in stream for c in RAW_CONTROLS), ascii(stream)
        for line in stream.split("\n"):
            if line.startswith("::"):  # only torchport's own annotations
                assert line.startswith(
                    (
                        "::warning title=torchport TP",
                        "::error title=torchport parse-error,",
                    )
                ), line
    errors = [line.split(": cannot parse: ")[0] for line in record_lines(proc.stderr)]
    assert sorted(errors) == sorted(
        [
            "./::error file=n1.py,line=1::FORGED.py",
            "x\\x1b[2K\\x1b[1A\\x1b[2Kforged.py",
            "a\\u2028b\\x0bc\\x0cd\\x85e.py",
        ]
    ), proc.stderr


def test_printable_escapes_controls_and_separators():
    from codemod.model.text import printable, printable_path

    assert printable("a\x1b[2Kb\tc\u2029d\x7f") == "a\\x1b[2Kb\\tc\\u2029d\\x7f"
    assert printable("caf\u00e9 \u4e2d.py") == "caf\u00e9 \u4e2d.py"  # text stays
    assert printable_path("::warning::x.py") == "./::warning::x.py"
    assert printable_path("/abs/::x.py") == "/abs/::x.py"
