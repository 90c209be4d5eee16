"""Rule documentation: generated docs are current, complete, and their examples true."""

from __future__ import annotations

import black
import pytest

from codemod.docs import RULES_MD, render_all
from codemod.passes.amp import RULES as AMP_RULES
from codemod.passes.base import Options
from codemod.rules import Fix, all_rules
from codemod.transform import rewrite_source
from tests.cli_helpers import run_cli


def test_rules_md_is_current():
    assert (
        RULES_MD.read_text(encoding="utf-8") == render_all()
    ), "docs/rules.md is stale: run python -m codemod.docs"


@pytest.mark.parametrize("rule", all_rules().values(), ids=lambda r: r.code)
def test_every_rule_is_documented(rule):
    assert rule.what and rule.why and rule.before and rule.safety
    assert rule.after or rule.fix is Fix.NONE


@pytest.mark.parametrize(
    "rule", [r for r in AMP_RULES if r.fix is not Fix.NONE], ids=lambda r: r.code
)
def test_amp_examples_are_what_the_rewrite_does(rule):
    source = "import torch\n\n" + rule.before + "\n"
    code = rewrite_source(source, Options(), format_mode=black.Mode()).code
    for line in rule.after.splitlines():
        assert line in code.splitlines(), f"{line!r} not in:\n{code}"


def test_explain_prints_the_rule():
    proc = run_cli(["explain", "tp402"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# TP402 cuda-amp-grad-scaler\n")
    assert (
        "## Fix safety" in proc.stdout
        and "GradScaler(DEVICE.type, 2.0**10)" in proc.stdout
    )


def test_explain_unknown_code_exits_2():
    proc = run_cli(["explain", "TP499"])
    assert proc.returncode == 2
    assert "no rule 'TP499'" in proc.stderr and "TP401" in proc.stderr
