"""Text from the tree or its configuration reaches the terminal escaped and of a
size a person reads: an unknown key holding ESC and BEL, a key of a megabyte."""

from __future__ import annotations

from tests.cli_helpers import CUDA, run_cli


def test_an_unknown_key_is_shown_escaped(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchport]\n"bad\\u001b[31mkey\\u0007" = 1\n'
    )
    proc = run_cli(["check", "a.py"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "tool.torchport.bad\\x1b[31mkey\\x07 (known:" in proc.stderr
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr


def test_a_key_of_a_megabyte_is_cut(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.torchport]\n" + "k" * 1_000_000 + " = 1\n"
    )
    proc = run_cli(["check", "a.py"], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and len(proc.stderr) < 1000, len(proc.stderr)
    assert "characters]..." in proc.stderr
