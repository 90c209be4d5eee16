"""The command line behaves as a Ruff user expects: a typo is never taken for a
path, `check` defaults to the current folder, a check of nothing fails, the
workflow options (--show-settings, --show-files, --output-file) and colour and
completion."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.cli_helpers import ROOT, run_cli, run_on_a_terminal

CUDA = "import torch\n\nx = torch.ones(2).cuda()\nprint(x.sum().item())\n"
LEFT = 'import torch\n\nDEVICES = ["cuda", "cpu"]\nprint(DEVICES)\n'


# -- a typo never rewrites the tree ---------------------------------------------
@pytest.mark.parametrize("typo, command", [("chekc", "check"), ("reprot", "report")])
def test_a_mistyped_subcommand_rewrites_nothing(tmp_path, typo, command):
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli([typo, "."], cwd=tmp_path)
    assert proc.returncode == 2
    assert (tmp_path / "a.py").read_text() == CUDA
    assert f"did you mean `torchport {command}`?" in proc.stderr
    assert "nothing was rewritten" in proc.stderr and "Traceback" not in proc.stderr


def test_a_mistyped_folder_word_rewrites_nothing_either(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["srcc", "a.py"], cwd=tmp_path)
    assert proc.returncode == 2 and (tmp_path / "a.py").read_text() == CUDA


def test_a_missing_file_among_others_is_one_line_and_the_rest_is_processed(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["gone.py", "a.py"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "gone.py: no such file or directory" in proc.stderr
    assert ".to(_DEVICE())" in (tmp_path / "a.py").read_text()


def test_the_explicit_fix_processes_the_other_paths(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["fix", "chekc", "a.py"], cwd=tmp_path)
    assert proc.returncode == 2 and ".to(_DEVICE())" in (tmp_path / "a.py").read_text()


# -- check defaults to '.', and a check of nothing fails --------------------------
def test_check_without_paths_checks_the_current_folder(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["check"], cwd=tmp_path)
    assert proc.returncode == 1 and "a.py:3:5: TP201" in proc.stdout


@pytest.mark.parametrize(
    "args", [["check", "empty"], ["check", "."], ["report", "empty", "-o", "r.md"]]
)
def test_a_folder_with_nothing_to_check_fails(tmp_path, args):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("cuda\n")
    proc = run_cli(args, cwd=tmp_path / "empty" if args[1] == "." else tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "no Python files or notebooks found" in proc.stderr


def test_a_mistyped_folder_fails(tmp_path):
    proc = run_cli(["check", "srcc"], cwd=tmp_path)
    assert proc.returncode == 2 and "srcc: no such file or directory" in proc.stderr


def test_output_file_takes_the_diagnostics(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(
        ["check", "--output-format", "json", "-o", "out.json", "a.py"], cwd=tmp_path
    )
    assert proc.returncode == 1 and proc.stdout == ""
    records = json.loads((tmp_path / "out.json").read_text())
    assert [r["code"] for r in records] == ["TP201"]
    assert "Would rewrite 1 of 1 file" in proc.stderr


def test_output_file_that_cannot_be_written_is_said_before_anything_runs(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(
        ["fix", "--output-file", "no/such/dir/out.txt", "a.py"], cwd=tmp_path
    )
    assert proc.returncode == 2 and "cannot write to no/such/dir/out.txt" in proc.stderr
    assert (tmp_path / "a.py").read_text() == CUDA


def test_show_files_lists_and_processes_nothing(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("generated/\n")
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "g.py").write_text(CUDA)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "b.py").write_text(CUDA)
    (tmp_path / "a.py").write_text(CUDA)
    (tmp_path / "notes.txt").write_text("cuda")
    proc = run_cli(["fix", "--show-files", "."], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["a.py", os.path.join("pkg", "b.py")]
    assert (tmp_path / "a.py").read_text() == CUDA


def test_show_settings_says_what_applies_and_where_from(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchport]\ntarget-torch = "2.7"\nignore = ["TP2"]\n'
        "[tool.ruff]\nline-length = 100\n"
    )
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["check", "--show-settings", "a.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Resolved settings for: a.py\nSettings path: ")
    assert 'target-torch = "2.7"' in proc.stdout and "line-length = 100" in proc.stdout
    record = json.loads(
        run_cli(
            ["check", "--show-settings", "--output-format", "json", "a.py"],
            cwd=tmp_path,
        ).stdout
    )
    assert record["settings-path"] == str((tmp_path / "pyproject.toml").resolve())
    assert "TP201" not in record["enabled-rules"] and "TP101" in record["enabled-rules"]


# -- colour --------------------------------------------------------------------
def _stdout_on_a_terminal(args, cwd, **env):
    return run_on_a_terminal(args, cwd, stream="stdout", **env)


def test_color_option(tmp_path):
    (tmp_path / "a.py").write_text(LEFT)
    piped = run_cli(["check", "--color", "always", "a.py"], cwd=tmp_path).stdout
    assert "\x1b[31mTP109" in piped
    assert "\x1b[" not in _stdout_on_a_terminal(
        ["check", "--color", "never", "a.py"], tmp_path
    )
    assert (
        "\x1b["
        not in run_cli(["check", "--color", "auto", "a.py"], cwd=tmp_path).stdout
    )


@pytest.mark.parametrize("variable", ["FORCE_COLOR", "CLICOLOR_FORCE"])
def test_forced_colour_when_piped(tmp_path, variable):
    (tmp_path / "a.py").write_text(LEFT)
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{variable: "1"})
    env.pop("NO_COLOR", None)
    proc = subprocess.run(
        [sys.executable, "-m", "codemod", "check", "a.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert "\x1b[" in proc.stdout and "TP109" in proc.stdout


def test_ci_on_a_terminal_is_coloured_and_no_color_is_not(tmp_path):
    (tmp_path / "a.py").write_text(LEFT)
    assert "\x1b[" in _stdout_on_a_terminal(["check", "a.py"], tmp_path, CI="true")
    assert "\x1b[" not in _stdout_on_a_terminal(
        ["check", "a.py"], tmp_path, NO_COLOR="1"
    )


def test_the_output_file_is_never_coloured(tmp_path):
    (tmp_path / "a.py").write_text(LEFT)
    run_cli(["check", "--color", "always", "-o", "out.txt", "a.py"], cwd=tmp_path)
    text = (tmp_path / "out.txt").read_text()
    assert "TP109" in text and "\x1b[" not in text


# -- shell completion ------------------------------------------------------------
def _complete(words: str, cword: int) -> str:
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        _TORCHPORT_COMPLETE="bash_complete",
        COMP_WORDS=words,
        COMP_CWORD=str(cword),
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from codemod.cli import main; main(prog_name='torchport')",
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    return proc.stdout


def test_subcommands_complete():
    assert "plain,check" in _complete("torchport ch", 1).splitlines()
    assert {"plain,check", "plain,fix", "plain,report", "plain,rule"} <= set(
        _complete("torchport ", 1).splitlines()
    )


def test_options_of_a_subcommand_complete():
    found = _complete("torchport check --output-f", 2).splitlines()
    assert {"plain,--output-format", "plain,--output-file"} <= set(found)


def test_a_path_completes_where_no_subcommand_matches():
    assert _complete("torchport src/", 1).splitlines() == ["file,src/"]
