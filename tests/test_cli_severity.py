"""Severity: sites that run everywhere as they stand (backend flags) are shown and
counted, but fail --check only with --strict."""

from __future__ import annotations

import pytest

from codemod.model.rule import Fix
from codemod.rules import all_rules
from tests.cli_helpers import run_cli

FLAGS = (
    "import torch\n\n"
    "torch.backends.cudnn.benchmark = True\n"
    "torch.backends.cudnn.deterministic = True\n"
    "torch.backends.cuda.matmul.allow_tf32 = True\n"
    "torch.backends.cudnn.allow_tf32 = True\n"
)
BREAKS = 'import torch\n\nDEVICES = ["cuda", "cpu"]\n'


def test_informational_sites_are_shown_but_do_not_fail(tmp_path):
    (tmp_path / "flags.py").write_text(FLAGS)
    proc = run_cli(["check", "flags.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shown = proc.stdout.splitlines()
    assert [line.split()[1:3] for line in shown] == [
        ["TP601", "(info)"],
        ["TP602", "(info)"],
        ["TP604", "(info)"],
        ["TP605", "(info)"],
    ]
    assert "4 sites left (4 informational)" in proc.stderr
    assert run_cli(["fix", "flags.py"], cwd=tmp_path).returncode == 0


def test_strict_makes_them_fail(tmp_path):
    (tmp_path / "flags.py").write_text(FLAGS)
    assert run_cli(["check", "--strict", "flags.py"], cwd=tmp_path).returncode == 1
    assert run_cli(["fix", "--strict", "flags.py"], cwd=tmp_path).returncode == 1


def test_sites_that_break_still_fail(tmp_path):
    (tmp_path / "flags.py").write_text(FLAGS)
    (tmp_path / "left.py").write_text(BREAKS)
    proc = run_cli(["check", "."], cwd=tmp_path)
    assert proc.returncode == 1
    assert "left.py:3:12: TP109 hard-coded" in proc.stdout


def test_statistics_count_informational_sites(tmp_path):
    (tmp_path / "flags.py").write_text(FLAGS)
    proc = run_cli(["check", "--statistics", "flags.py"], cwd=tmp_path)
    assert proc.stdout.splitlines()[-1].startswith(
        "Scanned 1 file, would change 0; 0 sites to rewrite, 4 reported, 4 of them"
        " informational"
    )


@pytest.mark.parametrize("rule", all_rules().values(), ids=lambda r: r.code)
def test_severity_is_known_and_only_for_sites_left_as_they_run(rule):
    assert rule.severity in ("error", "info")
    if rule.severity == "info":  # backend flags, or a site that runs as it stands
        assert rule.code.startswith("TP6") or rule.fix is Fix.NONE, rule.code
