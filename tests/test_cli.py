"""The command line, end to end, in subprocesses."""

from __future__ import annotations

import json
import shutil

from tests.cli_helpers import ROOT, run_cli

CUDA = "import torch\n\nx = torch.ones(2).cuda()\nprint(x.sum().item())\n"
LEFT = 'import torch\n\nDEVICES = ["cuda", "cpu"]\n'


def test_rewrites_in_place_and_second_run_is_clean(tmp_path):
    target = tmp_path / "train.py"
    target.write_text(CUDA)
    first = run_cli([str(target)], cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    text = target.read_text()
    assert ".to(_DEVICE())" in text and "def _DEVICE():" in text
    second = run_cli(["--check", str(target)], cwd=tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    assert target.read_text() == text


def test_diff_writes_nothing_and_exits_1(tmp_path):
    target = tmp_path / "train.py"
    target.write_text(CUDA)
    proc = run_cli(["--diff", str(target)], cwd=tmp_path)
    assert proc.returncode == 1
    assert "-x = torch.ones(2).cuda()" in proc.stdout
    assert "+x = torch.ones(2).to(_DEVICE())" in proc.stdout
    assert target.read_text() == CUDA


def test_check_fails_when_sites_remain_and_reports_them(tmp_path):
    target = tmp_path / "left.py"
    target.write_text(LEFT)
    proc = run_cli(["--check", str(target)], cwd=tmp_path)
    assert proc.returncode == 1
    assert f"{target}:3:12: TP109" in proc.stdout


def test_json_output(tmp_path):
    target = tmp_path / "left.py"
    target.write_text(LEFT)
    proc = run_cli(["--output-format", "json", str(target)], cwd=tmp_path)
    records = json.loads(proc.stdout)
    assert [(r["location"], r["code"], r["fix"]) for r in records] == [
        ({"row": 3, "column": 12}, "TP109", None)
    ]


def test_stdin_to_stdout(tmp_path):
    proc = run_cli(["-"], cwd=tmp_path, input=CUDA.encode())
    assert proc.returncode == 0
    assert ".to(_DEVICE())" in proc.stdout


def test_parse_error_is_reported_and_others_still_processed(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_bytes(b"x = torch.cuda(\n")
    good = tmp_path / "good.py"
    good.write_text(CUDA)
    proc = run_cli([str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{bad}: cannot parse" in proc.stderr
    assert bad.read_bytes() == b"x = torch.cuda(\n"
    assert ".to(_DEVICE())" in good.read_text()


def test_select_and_ignore(tmp_path):
    target = tmp_path / "train.py"
    target.write_text(CUDA)
    proc = run_cli(["--diff", "--ignore", "TP2", str(target)], cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""
    proc = run_cli(["--diff", "--select", "TP201", str(target)], cwd=tmp_path)
    assert proc.returncode == 1 and ".to(_DEVICE())" in proc.stdout


def test_rules_lists_every_code():
    proc = run_cli(["rules"])
    assert proc.returncode == 0
    for code in (
        "TP101",
        "TP102",
        "TP103",
        "TP104",
        "TP105",
        "TP109",
        "TP201",
        "TP202",
        "TP203",
    ):
        assert code in proc.stdout


def test_usage_error_exits_2(tmp_path):
    proc = run_cli(["--output-format", "xml", "x.py"], cwd=tmp_path)
    assert proc.returncode == 2


def test_nonexistent_path(tmp_path):
    proc = run_cli([str(tmp_path / "missing.py")], cwd=tmp_path)
    assert proc.returncode == 2
    assert "no such file" in proc.stderr


def test_example_diff_from_readme(tmp_path):
    example = tmp_path / "train_cuda.py"
    shutil.copy(ROOT / "examples" / "train_cuda.py", example)
    proc = run_cli(["--diff", str(example)], cwd=tmp_path)
    assert proc.returncode == 1
    assert "+    model = Net().to(device)" in proc.stdout
