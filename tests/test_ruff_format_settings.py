"""A project formatted with ``ruff format`` keeps its layout:
Ruff's ``line-length`` and ``[format]`` options are read where no ``[tool.black]``
configures black, so ``ruff format`` does not re-wrap the lines torchport wrote."""

from __future__ import annotations

import pytest

from tests.cli_helpers import run_cli

# The user's own device variable becomes the binding, laid out by the line length.
CUDA = (
    "import torch\n\n"
    'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
    "x = torch.ones(2).to(device)\n"
)
ONE_LINE = (
    "device = torch.accelerator.current_accelerator() if "
    'torch.accelerator.device_count() > 0 else torch.device("cpu")\n'
)
WRAPPED = "device = (\n    torch.accelerator.current_accelerator()\n"


@pytest.mark.parametrize(
    "name, text",
    [
        ("pyproject.toml", "[tool.ruff]\nline-length = 120\n"),
        ("ruff.toml", "line-length = 120\n"),
        (".ruff.toml", "line-length = 120\n[format]\nquote-style = 'double'\n"),
    ],
)
def test_ruffs_line_length_is_the_projects(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["a.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ONE_LINE in (tmp_path / "a.py").read_text()


def test_without_any_configuration_the_binding_keeps_to_88(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    run_cli(["a.py"], cwd=tmp_path)
    assert WRAPPED in (tmp_path / "a.py").read_text()


def test_black_configuration_wins_over_ruffs(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.black]\nline-length = 88\n[tool.ruff]\nline-length = 120\n"
    )
    (tmp_path / "a.py").write_text(CUDA)
    run_cli(["a.py"], cwd=tmp_path)
    assert WRAPPED in (tmp_path / "a.py").read_text()


QUOTED = "import torch\n\nprint('loss', torch.ones(2).cuda())\n"


def test_ruffs_quote_style_is_kept_on_the_changed_lines(tmp_path):
    (tmp_path / "a.py").write_text(QUOTED)
    run_cli(["a.py"], cwd=tmp_path)
    assert (
        'print("loss", torch.ones(2).to(_DEVICE()))' in (tmp_path / "a.py").read_text()
    )
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "ruff.toml").write_text("[format]\nquote-style = 'single'\n")
    (tmp_path / "b" / "a.py").write_text(QUOTED)
    run_cli(["b/a.py"], cwd=tmp_path)
    assert (
        "print('loss', torch.ones(2).to(_DEVICE()))"
        in (tmp_path / "b" / "a.py").read_text()
    )


def test_show_settings_names_the_line_length(tmp_path):
    (tmp_path / "ruff.toml").write_text("line-length = 120\n")
    (tmp_path / "a.py").write_text(CUDA)
    assert (
        "line-length = 120"
        in run_cli(["check", "--show-settings", "a.py"], cwd=tmp_path).stdout
    )
