"""Targets below torch.accelerator (2.6): nothing emitted needs a newer torch.

CI also runs ``scripts/old_torch_fixtures.py`` in a second environment with an old
torch, which executes these fixtures there; this is the static half, on every run."""

from __future__ import annotations

import pytest

from codemod.model.options import Options
from codemod.rewrite.pipeline import rewrite_source
from scripts.old_torch_fixtures import old_target_fixtures, too_new
from tests.fixture_cases import FIXTURES, after_of, case_id, options_of

OLD = old_target_fixtures((2, 6))


def test_there_are_fixtures_for_old_targets():
    assert {options_of(p.read_text()).target_torch for p in OLD} >= {(2, 2), (2, 4)}


@pytest.mark.parametrize("before", OLD, ids=case_id)
def test_after_names_nothing_newer_than_its_target(before):
    code = after_of(before).read_text(encoding="utf-8")
    assert too_new(code, options_of(code).target_torch) == []


def test_the_check_sees_an_accelerator_binding():
    source = "import torch\nx = torch.ones(1).cuda()\n"
    emitted = rewrite_source(source, Options(target_torch=(2, 7))).code
    assert too_new(emitted, (2, 4)) == [r"(^|\.)accelerator(\.|$) needs torch >= 2.6"]


@pytest.mark.parametrize("target", [(2, 0), (2, 4), (2, 5)])
def test_binding_below_2_6_agrees_with_the_cuda_tests_the_module_keeps(target):
    # DDP's device_ids fix needs the device even where torch.accelerator is missing;
    # its "nccl"/availability test stays CUDA's there, so the device does too.
    source = (FIXTURES / "binding" / "target_2_4_ddp.before.py").read_text()
    code = rewrite_source(source, Options(target_torch=target)).code
    binding = 'return torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
    assert "def _DEVICE():" in code and binding in code
    assert 'device_ids=[0] if _DEVICE().type != "cpu" else None' in code
    assert too_new(code, target) == []


ADAPTIVE = 'if hasattr(torch, "accelerator") and torch.accelerator.is_available():'
PLAIN = "import torch\n\nx = torch.ones(2).cuda()\nprint(x.sum().item())\n"


@pytest.mark.parametrize("target", [(2, 0), (2, 4), (2, 5)])
def test_binding_below_2_6_adapts_to_the_torch_it_runs_on(target):
    result = rewrite_source(PLAIN, Options(target_torch=target))
    assert ADAPTIVE in result.code and "x = torch.ones(2).to(_DEVICE())" in result.code
    assert not [d for d in result.diagnostics if d.code == "TP103"]
    assert too_new(result.code, target) == []  # its accelerator calls are guarded
    again = rewrite_source(result.code, Options(target_torch=target))
    assert again.code == result.code and not again.diagnostics


def test_the_check_sees_an_accelerator_call_the_guard_does_not_cover():
    code = (
        'import torch\nif hasattr(torch, "accelerator"):\n    pass\n'
        "torch.accelerator.synchronize()\n"
    )
    assert too_new(code, (2, 4)) == [r"(^|\.)accelerator(\.|$) needs torch >= 2.6"]


def test_an_accessor_written_before_it_adapted_is_kept():
    legacy = (
        "import functools\n\nimport torch\n\n\n"
        "@functools.lru_cache(maxsize=None)\ndef DEVICE():\n"
        '    """The CUDA device found on first use, else the CPU."""\n'
        '    return torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "\n\nx = torch.ones(2).to(DEVICE())\ny = torch.ones(2).cuda()\n"
    )
    code = rewrite_source(legacy, Options(target_torch=(2, 4))).code
    assert code == legacy.replace(".cuda()", ".to(DEVICE())")


@pytest.mark.parametrize("positions, line", [("output", 17), ("input", 15)])
def test_the_cuda_only_binding_is_reported(positions, line):
    # Written at line 17 of the output; in the input it is needed from line 15 on.
    source = (FIXTURES / "binding" / "target_2_4_ddp.before.py").read_text()
    result = rewrite_source(source, Options(target_torch=(2, 4)), positions=positions)
    (report,) = [d for d in result.diagnostics if d.code == "TP103"]
    assert (report.line, report.applied) == (line, False)
    assert "picks only CUDA" in report.message
