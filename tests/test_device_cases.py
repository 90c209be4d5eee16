"""Vendor answers keep a "cuda" case or test CUDA's; lists naming another
accelerator are reported (passes/device_cases.py)."""

from __future__ import annotations

import libcst as cst
import pytest

from codemod.model.options import Options
from codemod.passes.device_cases import vendor_answer
from codemod.rewrite.pipeline import rewrite_source


def _statement(code: str) -> cst.CSTNode:
    return cst.parse_module(code).body[0]


@pytest.mark.parametrize(
    "code",
    ['return "nccl"\n', 'name = "NVIDIA"\n', 'kind: str = "cudnn"\n', "x = ('nvcc')\n"],
)
def test_a_vendor_returned_or_assigned_is_an_answer(code):
    assert vendor_answer(_statement(code))


@pytest.mark.parametrize(
    "code",
    ['return "gloo"\n', 'print("nccl")\n', 'init("nccl")\n', "return 2\n"],
)
def test_other_values_or_a_vendor_passed_on_are_not(code):
    assert not vendor_answer(_statement(code))


def test_the_value_a_conditional_expression_picks_is_an_answer():
    assert vendor_answer(cst.parse_expression('"nccl"'))


def _rewrite(body: str):
    result = rewrite_source("import torch\n" + body, Options(target_torch=(2, 13)))
    return result.code, [d for d in result.diagnostics if d.code == "TP104"]


def test_a_case_answering_a_vendor_is_kept_and_reported():
    code, reports = _rewrite(
        "def f(dev):\n"
        "    match dev:\n"
        '        case "cuda":\n'
        '            return "nvidia"\n'
    )
    assert 'case "cuda":' in code
    assert [r.applied for r in reports] == [False]
    assert "answers as only CUDA does" in reports[0].message


def test_a_list_naming_another_accelerator_is_reported():
    code, reports = _rewrite('def f(dev):\n    return dev in ["cuda", "xpu"]\n')
    assert 'dev in ["cuda", "xpu"]' in code
    assert [r.applied for r in reports] == [False]
    assert "names another accelerator" in reports[0].message
