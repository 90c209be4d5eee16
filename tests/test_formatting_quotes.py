"""A project formatted by `ruff format` with `quote-style = "single"` gets single
quotes in the lines torchport writes (black writes double ones only), so that the
real `ruff format --check` passes after a fix; other lines keep their quotes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.cli_helpers import run_cli

SOURCE = (
    "import torch\n"
    "\n"
    "flag = 'a'\n"
    "y = torch.tensor([1]).cuda() if flag == 'a' else None\n"
    "x = torch.ones(2).pin_memory()\n"
    'print(y, x, "it\'s")\n'
)


def _ruff_check(folder) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--diff", "."],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    "name, config",
    [
        ("pyproject.toml", '[tool.ruff.format]\nquote-style = "single"\n'),
        ("ruff.toml", '[format]\nquote-style = "single"\n'),
    ],
)
def test_ruff_format_check_passes_after_a_fix(tmp_path, name, config):
    (tmp_path / name).write_text(config)
    (tmp_path / "a.py").write_text(SOURCE)
    assert _ruff_check(tmp_path).returncode == 0  # formatted before
    proc = run_cli(["a.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "a.py").read_text()
    assert "return torch.device('cpu')" in text
    assert "pin_memory=_DEVICE().type != 'cpu'" in text
    assert '"it\'s"' in text  # a double-quoted string with a quote inside stays
    assert '"""The accelerator' in text  # docstrings keep double quotes, as in Ruff
    checked = _ruff_check(tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    again = run_cli(["a.py"], cwd=tmp_path)
    assert "Rewrote 0 of 1 file" in again.stderr


def test_double_quotes_stay_the_default(tmp_path):
    (tmp_path / "a.py").write_text(SOURCE)
    run_cli(["a.py"], cwd=tmp_path)
    text = (tmp_path / "a.py").read_text()
    assert 'return torch.device("cpu")' in text
    assert "flag = 'a'" in text  # a line torchport did not write: as it was
