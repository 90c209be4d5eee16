"""Output: formats, --quiet, --show-fixes, the summary on stderr, the progress bar."""

from __future__ import annotations

import json

from codemod.model.diagnostic import Diagnostic
from codemod.output.findings import Findings
from codemod.output.github import render_github
from codemod.output.text import render_text
from tests.cli_helpers import run_cli, run_on_a_terminal

CUDA = "import torch\n\nx = torch.ones(2).cuda()\nprint(x.sum().item())\n"
MIXED = 'import torch\n\nx = torch.ones(2).cuda()\nDEVICES = ["cuda", "cpu"]\n'


def test_summary_goes_to_stderr_and_diagnostics_to_stdout(tmp_path):
    (tmp_path / "a.py").write_text(MIXED)
    proc = run_cli(["a.py"], cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == (
        'a.py:15:12: TP109 hard-coded "cuda" string in a position torchport cannot type;'
        " derive it from the device binding (`_DEVICE().type`)\n"
    )
    assert proc.stderr == "Rewrote 1 of 1 file (1 site); 1 site left; 0 errors\n"


def test_quiet_prints_diagnostics_only(tmp_path):
    (tmp_path / "a.py").write_text(MIXED)
    proc = run_cli(["--quiet", "--check", "a.py"], cwd=tmp_path)
    assert proc.returncode == 1 and proc.stderr == ""
    assert "a.py:4:12: TP109" in proc.stdout


def test_show_fixes_lists_each_rewritten_site(tmp_path):
    (tmp_path / "a.py").write_text(MIXED)
    (tmp_path / "b.py").write_text("print('no cuda here')\n")
    proc = run_cli(["--show-fixes", "a.py", "b.py"], cwd=tmp_path)
    assert (
        "Fixed in a.py:\n  14:5: TP201 " in proc.stdout
    )  # the line in the rewritten file
    assert "b.py" not in proc.stdout
    lines = (tmp_path / "a.py").read_text().splitlines()
    assert lines[13] == "x = torch.ones(2).to(_DEVICE())"


def test_show_fixes_in_check_mode_uses_input_lines(tmp_path):
    (tmp_path / "a.py").write_text(MIXED)
    proc = run_cli(["--check", "--show-fixes", "a.py"], cwd=tmp_path)
    assert "Would fix in a.py:\n  3:5: TP201 " in proc.stdout


def test_json_with_show_fixes_includes_applied_sites(tmp_path):
    (tmp_path / "a.py").write_text(MIXED)
    records = json.loads(
        run_cli(["--output-format", "json", "a.py"], cwd=tmp_path).stdout
    )
    assert [(r["code"], r["fix"]) for r in records] == [("TP109", None)]
    (tmp_path / "b.py").write_text(MIXED)
    args = ["--output-format", "json", "--show-fixes", "b.py"]
    records = json.loads(run_cli(args, cwd=tmp_path).stdout)
    assert [(r["code"], r["state"], r["fix"]["applied"]) for r in records[:1]] == [
        ("TP201", "rewritten", True)
    ]
    assert [(r["code"], r["state"], r["fix"]) for r in records[1:]] == [
        ("TP109", "reported", None)
    ]


def test_github_annotations(tmp_path):
    (tmp_path / "a.py").write_text(MIXED)
    proc = run_cli(["--check", "--output-format", "github", "a.py"], cwd=tmp_path)
    assert proc.stdout.splitlines() == [
        "::warning title=torchport TP201,file=a.py,line=3,endLine=3,col=5,endColumn=25"
        "::TP201 `.cuda()` moves to CUDA only; use `.to(_DEVICE())`",
        "::warning title=torchport TP109,file=a.py,line=4,endLine=4,col=12,endColumn=18"
        '::TP109 hard-coded "cuda" string in a position torchport cannot type; derive'
        " it from the device binding (`_DEVICE().type`)",
    ]


def test_github_escaping_stops_a_crafted_file_name_from_injecting():
    crafted = "x,line=1,col=1::pwned\n::error file=evil.py%0A.py"
    diagnostic = Diagnostic(
        crafted, 2, 3, "TP201", "n", "msg\n::error::injected 100%", "safe"
    )
    out = render_github(Findings([diagnostic]))
    # One command on one line; in the message only newlines and % need escaping.
    assert out.count("\n") == 1
    assert out == (
        "::warning title=torchport TP201,"
        "file=x%2Cline=1%2Ccol=1%3A%3Apwned%0A%3A%3Aerror file=evil.py%250A.py,"
        "line=2,col=3::TP201 msg%0A::error::injected 100%25\n"
    )
    assert render_text(Findings([diagnostic])).count("\n") == 1


def test_notebook_annotation_names_the_cell():
    diagnostic = Diagnostic("nb.ipynb", 2, 9, "TP201", "n", "msg", "safe", cell=3)
    assert render_github(Findings([diagnostic])) == (
        "::warning title=torchport TP201,file=nb.ipynb,line=1::cell 3:2:9: TP201 msg\n"
    )
    assert render_text(Findings([diagnostic])) == "nb.ipynb:cell 3:2:9: TP201 msg\n"


def _many_files(tmp_path, count=60):
    for i in range(count):
        (tmp_path / f"m{i}.py").write_text(CUDA if i % 2 else "print(1)\n")


def test_no_progress_bar_when_piped(tmp_path):
    _many_files(tmp_path)
    proc = run_cli(["--check", "."], cwd=tmp_path)
    assert proc.stderr == (
        "Would rewrite 30 of 60 files (30 sites); 0 sites left; 0 errors\n"
        "30 fixable with `torchport fix`\n"
    )


def _run_on_a_terminal(args, cwd):
    """Run the command line with stderr on a pseudo-terminal; return what it showed."""
    return run_on_a_terminal(args, cwd)


def test_progress_bar_on_a_terminal(tmp_path):
    _many_files(tmp_path)
    shown = _run_on_a_terminal(["--check", "-j", "1", "."], tmp_path)
    assert "torchport" in shown and "100%" in shown, shown
    assert "Would rewrite 30 of 60 files" in shown
    quiet = _run_on_a_terminal(["--check", "--quiet", "-j", "1", "."], tmp_path)
    assert quiet == ""
    few = tmp_path / "few"
    few.mkdir()
    (few / "a.py").write_text(CUDA)
    assert "%" not in _run_on_a_terminal(["--check", str(few)], tmp_path)


def test_version():
    proc = run_cli(["--version"])
    assert proc.returncode == 0 and proc.stdout.startswith("torchport, version ")
