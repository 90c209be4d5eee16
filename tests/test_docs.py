"""Rule documentation: generated docs are current, complete, and their examples true."""

from __future__ import annotations

import json

import black
import pytest

from codemod.output.docs import RULES_MD, render_all
from codemod.run.job import CHECK, Job
from codemod.run.process import process_source
from codemod.rules.notebook import SKIPPED_CELL
from codemod.model.options import Options
from codemod.model.rule import Fix
from codemod.rules import all_rules
from codemod.rewrite.pipeline import rewrite_source
from tests.cli_helpers import run_cli


def test_rules_md_is_current():
    assert (
        RULES_MD.read_text(encoding="utf-8") == render_all()
    ), "docs/rules.md is stale: run python -m codemod.output.docs"


@pytest.mark.parametrize("rule", all_rules().values(), ids=lambda r: r.code)
def test_every_rule_is_documented(rule):
    assert rule.what and rule.why and rule.before and rule.safety
    assert rule.after or rule.fix is Fix.NONE


@pytest.mark.parametrize("rule", all_rules().values(), ids=lambda r: r.code)
def test_every_example_is_what_the_rewrite_does(rule):
    # The example is a whole program: rewritten as it stands, it gives the rule's
    # diagnostic and, for a rule with a fix, exactly the documented result.
    options = Options(unsafe_fixes=rule.fix is Fix.UNSAFE)
    if rule.code == SKIPPED_CELL.code:  # a notebook rule: the example is one cell
        codes, after_codes = (_cell_codes(text) for text in (rule.before, rule.after))
        assert rule.code in codes and rule.code not in after_codes
        return
    result = rewrite_source(rule.before + "\n", options, format_mode=black.Mode())
    assert rule.code in {d.code for d in result.diagnostics}
    if rule.fix is not Fix.NONE:
        assert result.code == rule.after + "\n"


VALID_EXAMPLES = [
    (rule, index, text)
    for rule in all_rules().values()
    for index, text in enumerate(rule.valid)
]


@pytest.mark.parametrize(
    "rule, index, text",
    VALID_EXAMPLES,
    ids=[f"{rule.code}-{index}" for rule, index, _ in VALID_EXAMPLES],
)
def test_every_negative_example_is_left_alone(rule, index, text):
    # A negative example is a whole program the rule has no site in: rewritten with
    # every fix allowed, it gives no diagnostic of the rule and is not changed by it.
    options = Options(unsafe_fixes=True)
    result = rewrite_source(text + "\n", options, format_mode=black.Mode())
    assert rule.code not in {d.code for d in result.diagnostics}
    assert result.code == text + "\n"


def test_explain_prints_the_rule():
    proc = run_cli(["explain", "tp402"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# TP402 cuda-amp-grad-scaler\n")
    assert "## Fix safety" in proc.stdout and 'else "cuda", 2.0**10' in proc.stdout


def test_explain_unknown_code_exits_2():
    proc = run_cli(["explain", "TP499"])
    assert proc.returncode == 2
    assert "no rule 'TP499'" in proc.stderr and "TP401" in proc.stderr


def _cell_codes(text: str):
    """The codes torchport reports for a notebook made of one code cell ``text``."""
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "source": text}],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    data = json.dumps(notebook).encode()
    result = process_source("example.ipynb", data, Job(CHECK, Options()))
    assert result.error is None, result.error
    return {d.code for d in result.diagnostics}


def test_explain_shows_which_backends_implement_the_fix():
    proc = run_cli(["explain", "TP308"])
    assert proc.returncode == 0, proc.stderr
    table = proc.stdout.split("## Backends", 1)[1]
    assert "| idiom | CUDA | CPU | MPS | XPU | TorchTPU | TorchNeuron |" in table
    assert "| `torch.accelerator.empty_cache()` | yes | no |" in table
