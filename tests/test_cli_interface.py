"""The command line as a Ruff or Black user meets it: markers, typos, subcommands,
--exit-zero, colour, help, device names, stdin and exclude, plurals, bad paths."""

from __future__ import annotations


import pytest

from tests.cli_helpers import run_cli, run_on_a_terminal

CUDA = "import torch\n\nx = torch.ones(2).cuda()\nprint(x.sum().item())\n"
UNSAFE = "import torch\n\nwhere = 0\nx = torch.ones(2).cuda(where)\nprint(x)\n"
LEFT = 'import torch\n\nDEVICES = ["cuda", "cpu"]\nprint(DEVICES)\n'


# -- 1: [*] marks a fix that will be applied, as in Ruff --------------------------
def test_star_marks_the_sites_a_fix_run_rewrites(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    (tmp_path / "b.py").write_text(UNSAFE)
    out = run_cli(["check", "a.py", "b.py"], cwd=tmp_path).stdout
    assert "a.py:3:5: TP201 [*] `.cuda()`" in out
    unsafe = next(line for line in out.splitlines() if line.startswith("b.py:4"))
    assert "[*]" not in unsafe and "unsafe fix available with --unsafe-fixes" in unsafe
    # With --unsafe-fixes the same site is fixable, so it gets the marker.
    out = run_cli(["check", "--unsafe-fixes", "b.py"], cwd=tmp_path).stdout
    assert out.startswith("b.py:4:5: TP201 [*] ")


# -- 2: unknown codes are errors; repeated options add up -------------------------
@pytest.mark.parametrize("code", ["TP999", "TP7", "XY1"])
def test_unknown_select_code_is_an_error(tmp_path, code):
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["--select", code, "a.py"], cwd=tmp_path)
    assert proc.returncode == 2
    assert code in proc.stderr and proc.stderr.startswith("torchport: --select")
    assert (tmp_path / "a.py").read_text() == CUDA


def test_unknown_code_suggests_close_ones(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["--ignore", "TP2011", "a.py"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "unknown rule code or prefix 'TP2011' (did you mean TP201" in proc.stderr
    proc = run_cli(["--select", "TP7", "a.py"], cwd=tmp_path)
    assert "'TP7' (the families are TP1, TP2, TP3, TP4, TP5, TP6, TP9)" in proc.stderr


def test_unknown_code_in_pyproject_is_an_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchport]\nselect = ["TP999"]\n')
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["a.py"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "pyproject.toml: tool.torchport.select: unknown rule code" in proc.stderr
    assert "'TP999'" in proc.stderr
    assert (tmp_path / "a.py").read_text() == CUDA


def test_repeated_select_accumulates(tmp_path):
    source = CUDA + 'y = torch.ones(2, device="cuda")\n'
    (tmp_path / "a.py").write_text(source)
    both = run_cli(
        ["check", "--select", "TP1", "--select", "TP2", "a.py"], cwd=tmp_path
    )
    codes = {line.split()[1] for line in both.stdout.splitlines()}
    assert codes == {"TP102", "TP201"}
    only = run_cli(["check", "--select", "TP2", "a.py"], cwd=tmp_path)
    assert {line.split()[1] for line in only.stdout.splitlines()} == {"TP201"}


# -- 5: subcommands, --exit-zero, colour, help, explain by name -------------------
def test_help_lists_subcommands_and_version():
    out = run_cli(["--help"]).stdout
    for word in ("check", "fix", "rule", "report", "--version"):
        assert word in out
    assert run_cli(["-V"]).stdout.startswith("torchport, version ")


def test_fix_help_documents_the_options():
    out = run_cli(["fix", "--help"]).stdout
    for option in (
        "--select",
        "--exit-zero",
        "--strict",
        "--output-format",
        "--report",
    ):
        assert option in out
    assert "repeat the option" in out


def test_check_subcommand_writes_nothing(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["check", "a.py"], cwd=tmp_path)
    assert proc.returncode == 1 and (tmp_path / "a.py").read_text() == CUDA
    proc = run_cli(["fix", "a.py"], cwd=tmp_path)
    assert proc.returncode == 0 and ".to(_DEVICE())" in (tmp_path / "a.py").read_text()


def test_exit_zero(tmp_path):
    (tmp_path / "a.py").write_text(LEFT)
    proc = run_cli(["check", "--exit-zero", "a.py"], cwd=tmp_path)
    assert proc.returncode == 0 and "TP109" in proc.stdout
    (tmp_path / "bad.py").write_text("x = torch.cuda(\n")
    proc = run_cli(["check", "--exit-zero", "bad.py"], cwd=tmp_path)
    assert proc.returncode == 2  # errors are not findings


def test_rule_by_code_or_name():
    by_code = run_cli(["rule", "TP201"])
    by_name = run_cli(["explain", "cuda-method"])
    assert by_code.returncode == by_name.returncode == 0
    assert by_code.stdout == by_name.stdout and by_code.stdout.startswith("# TP201 ")
    listing = run_cli(["rule", "--all"]).stdout
    assert listing == run_cli(["rules"]).stdout and "TP601" in listing


def test_rules_listing_has_no_version_for_report_only_rules():
    out = run_cli(["rules"]).stdout
    assert "torch>=-" not in out
    tp109 = next(line for line in out.splitlines() if line.startswith("TP109"))
    assert "torch>=" not in tp109
    tp301 = next(line for line in out.splitlines() if line.startswith("TP301"))
    assert "torch>=2.6" in tp301


def test_a_folder_named_rules_is_migrated(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "a.py").write_text(CUDA)
    proc = run_cli(["rules"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ".to(_DEVICE())" in (tmp_path / "rules" / "a.py").read_text()
    # Elsewhere the word is the listing.
    assert "TP201" in run_cli(["rules"], cwd=tmp_path / "rules").stdout


def _stdout_on_a_terminal(args, cwd, **env):
    return run_on_a_terminal(args, cwd, stream="stdout", **env)


def test_colour_on_a_terminal_only(tmp_path):
    (tmp_path / "a.py").write_text(LEFT)
    coloured = _stdout_on_a_terminal(["check", "a.py"], tmp_path)
    assert "\x1b[" in coloured and "TP109" in coloured
    assert "\x1b[" not in _stdout_on_a_terminal(
        ["check", "a.py"], tmp_path, NO_COLOR="1"
    )
    # CI alone says nothing about the stream (as in Ruff): a terminal is one.
    assert "\x1b[" in _stdout_on_a_terminal(["check", "a.py"], tmp_path, CI="true")
    piped = run_cli(["check", "a.py"], cwd=tmp_path).stdout
    assert "\x1b[" not in piped and "TP109" in piped


# -- 8: device names -------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, why",
    [
        ("class", "is a Python keyword"),
        ("print", "is a Python builtin"),
        ("torch", "is the torch module itself"),
        ("2fast", "must be a Python identifier"),
    ],
)
def test_device_name_is_validated(tmp_path, name, why):
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["--device-name", name, "a.py"], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("torchport: --device-name") and why in proc.stderr
    assert "Traceback" not in proc.stderr
    assert (tmp_path / "a.py").read_text() == CUDA


def test_device_name_in_pyproject_is_validated(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchport]\ndevice-name = "torch"\n'
    )
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["a.py"], cwd=tmp_path)
    assert proc.returncode == 2 and "tool.torchport.device-name" in proc.stderr


def test_a_good_device_name_is_used(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    assert run_cli(["--device-name", "ACCEL", "a.py"], cwd=tmp_path).returncode == 0
    assert ".to(ACCEL())" in (tmp_path / "a.py").read_text()


# -- 9: stdin and exclude, .git/info/exclude, plurals, missing paths ------------------
def test_stdin_filename_honours_exclude(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchport]\nexclude = ["vendored/"]\n'
    )
    (tmp_path / "vendored").mkdir()
    args = ["-", "--stdin-filename", "vendored/x.py"]
    proc = run_cli(args, cwd=tmp_path, input=CUDA.encode())
    assert proc.returncode == 0 and proc.stdout == CUDA
    proc = run_cli(["-", "--stdin-filename", "x.py"], cwd=tmp_path, input=CUDA.encode())
    assert ".to(_DEVICE())" in proc.stdout


def test_summary_uses_singular_and_plural(tmp_path):
    (tmp_path / "a.py").write_text(CUDA + 'DEVICES = ["cuda", "cpu"]\n')
    (tmp_path / "bad.py").write_text("x = torch.cuda(\n")
    proc = run_cli(["check", "a.py", "bad.py"], cwd=tmp_path)
    assert (
        "Would rewrite 1 of 2 files (1 site); 1 site left; 1 error"
        in proc.stderr.splitlines()
    )


def test_nonexistent_path_is_an_error_not_a_summary(tmp_path):
    proc = run_cli(["missing.py"], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "missing.py: no such file or directory\n"


def test_progress_bar_has_no_time_estimate(tmp_path):
    for i in range(60):
        (tmp_path / f"m{i}.py").write_text(CUDA if i % 2 else "print(1)\n")
    text = run_on_a_terminal(["check", "-j", "1", "."], tmp_path)
    assert "60/60" in text and "100%" in text
    assert "eta" not in text  # click's estimate, wildly off early in a run
