"""What the command line says a user should do next, as Ruff says it: the help for
a bare `torchport`, the spelling that rewrites for Ruff's `check --fix`, how many
sites `torchport fix` would rewrite, and why a `--diff` with nothing in it fails."""

from __future__ import annotations

from tests.cli_helpers import CUDA, ROOT, run_cli

# A string torchport cannot type: a site no fix rewrites.
UNFIXABLE = 'import torch\nDEVICES = ["cuda", "cpu"]\n'


def test_bare_torchport_prints_the_help():
    proc = run_cli([])
    assert proc.returncode == 2
    assert "Usage: torchport" in proc.stderr and "Commands:" in proc.stderr
    assert "no paths given" not in proc.stderr
    assert proc.stdout == ""


def test_check_fix_names_the_command_that_rewrites(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["check", "--fix", "a.py"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "No such option '--fix'" in proc.stderr
    assert "`torchport fix PATH...` rewrites" in proc.stderr
    assert (tmp_path / "a.py").read_text() == CUDA


def test_check_says_how_many_sites_torchport_fix_rewrites(tmp_path):
    (tmp_path / "a.py").write_text(CUDA + UNFIXABLE)
    proc = run_cli(["check", "a.py"], cwd=tmp_path)
    assert proc.returncode == 1
    assert "\n1 fixable with `torchport fix`\n" in "\n" + proc.stderr
    quiet = run_cli(["check", "-q", "a.py"], cwd=tmp_path)
    assert "fixable" not in quiet.stderr
    clean = tmp_path / "b.py"
    clean.write_text(UNFIXABLE)
    assert "fixable" not in run_cli(["check", "b.py"], cwd=tmp_path).stderr


def test_a_diff_with_nothing_in_it_says_why_it_fails(tmp_path):
    (tmp_path / "a.py").write_text(UNFIXABLE)
    proc = run_cli(["--diff", "a.py"], cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "1 site that no fix rewrites is not in the diff" in proc.stderr
    assert "`torchport check` lists them" in proc.stderr
    (tmp_path / "b.py").write_text(CUDA)
    fixed_only = run_cli(["--diff", "b.py"], cwd=tmp_path)
    assert fixed_only.returncode == 1 and fixed_only.stdout.startswith("---")
    assert "not in the diff" not in fixed_only.stderr


def test_nothing_sends_the_user_to_an_older_spelling():
    """`torchport explain` gives way to a folder named `explain` (it would migrate
    it): messages and documents name `torchport rule`, which always documents."""
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    texts += sorted((ROOT / "codemod").rglob("*.py"))
    texts += sorted((ROOT / "fixtures").rglob("*.diagnostics.txt"))
    naming = [p for p in texts if "torchport explain" in p.read_text("utf-8")]
    assert naming == []


# Three sites whose fixes need torch.accelerator (2.6) or its memory statistics (2.9).
KEPT_BY_FLOOR = (
    "import torch\n\n"
    "torch.cuda.synchronize()\n"
    "torch.cuda.manual_seed_all(0)\n"
    "print(torch.cuda.memory_allocated())\n"
)


def test_a_run_says_how_many_sites_the_declared_floor_keeps(tmp_path):
    (tmp_path / "a.py").write_text(KEPT_BY_FLOOR)
    (tmp_path / "requirements.txt").write_text("torch>=2.1\n")
    proc = run_cli(["check", "."], cwd=tmp_path)
    assert proc.stderr.splitlines()[-1] == (
        "3 sites kept CUDA-only by the target torch 2.1: torch >= 2.6 would port 2"
        " of them, >= 2.9 all (raise the floor, or --target-torch 2.9)"
    ), proc.stderr
    (tmp_path / "requirements.txt").write_text("torch>=2.10\n")
    proc = run_cli(["check", "."], cwd=tmp_path)
    assert "kept CUDA-only by the target" not in proc.stderr
