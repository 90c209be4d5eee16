"""--statistics and the unsafe-fix summary, through the real command line."""

from __future__ import annotations

from tests.cli_helpers import run_cli

SOURCE = """import torch

x = torch.ones(2).cuda()
torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
with torch.cuda.nvtx.range("step"):
    y = x * 2
"""


def test_statistics_counts_per_rule_and_family(tmp_path):
    (tmp_path / "train.py").write_text(SOURCE)
    (tmp_path / "clean.py").write_text("print('no accelerator here')\n")
    proc = run_cli(["--check", "--statistics", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 1
    rows = {line.split()[1]: line.split() for line in proc.stdout.splitlines()[1:-1]}
    assert rows["TP201"][:4] == ["1", "TP201", "1", "0"]
    assert rows["TP601"] == ["1", "TP601", "0", "1", "cudnn-benchmark", "(info)"]
    assert rows["TP604"][:4] == ["1", "TP604", "0", "1"]
    assert rows["TP902"][:4] == ["1", "TP902", "1", "0"]  # kept for CUDA
    assert proc.stdout.splitlines()[-1] == (
        "Scanned 2 files, would change 1; 2 sites to rewrite, 2 reported,"
        " 2 of them informational (TP2: 1 to rewrite, 0 reported; TP6: 0 to rewrite,"
        " 2 reported; TP9: 1 to rewrite, 0 reported)"
    )
    assert "train.py:" not in proc.stdout  # counts instead of each site


def test_unsafe_fix_summary(tmp_path):
    target = tmp_path / "train.py"
    target.write_text(SOURCE)
    proc = run_cli(["--check", str(target)], cwd=tmp_path)
    # TP604; the nvtx range has a safe fix, record_function is its unsafe one.
    assert "1 unsafe fix available with --unsafe-fixes" in proc.stderr
    proc = run_cli(["--check", "--unsafe-fixes", str(target)], cwd=tmp_path)
    assert "unsafe fix" not in proc.stderr
    proc = run_cli(["--unsafe-fixes", str(target)], cwd=tmp_path)
    text = target.read_text()
    assert 'torch.set_float32_matmul_precision("high")' in text
    assert 'with torch.profiler.record_function("step"):' in text


def test_unsafe_fix_the_target_cannot_take_is_not_counted(tmp_path):
    target = tmp_path / "train.py"
    target.write_text("import torch\n\nfree, total = torch.cuda.mem_get_info()\n")
    proc = run_cli(["--check", str(target)], cwd=tmp_path)
    assert "1 unsafe fix available with --unsafe-fixes" in proc.stderr
    proc = run_cli(["--check", "--target-torch", "2.5", str(target)], cwd=tmp_path)
    assert "unsafe fix" not in proc.stderr


def test_statistics_from_stdin(tmp_path):
    proc = run_cli(
        ["--check", "--statistics", "-"], cwd=tmp_path, input=SOURCE.encode()
    )
    assert proc.stdout.splitlines()[-1].startswith("Scanned 1 file, would change 1;")
