"""CUDA seeds that repeat ``torch.manual_seed`` are removed (codemod/passes/runtime/
seeds.py); the others keep their portable form or are reported (TP310)."""

from __future__ import annotations

import pytest

from codemod.model.options import Options
from codemod.rewrite.pipeline import rewrite_source


def _rewrite(body: str, target=(2, 13)):
    result = rewrite_source("import torch\n" + body, Options(target_torch=target))
    return result.code, [d for d in result.diagnostics if d.code == "TP310"]


@pytest.mark.parametrize("target", [(2, 4), (2, 13)])
def test_a_repeated_seed_is_removed_at_every_target(target):
    code, reports = _rewrite(
        "def seed_all(seed):\n"
        "    torch.manual_seed(seed)\n"
        "    torch.cuda.manual_seed(seed)\n"
        "    torch.cuda.manual_seed_all(seed)\n"
        "    return seed\n",
        target,
    )
    assert "cuda" not in code and "torch.manual_seed(seed)\n    return seed" in code
    assert [r.applied for r in reports] == [True, True]
    assert "seeded every CUDA device with the same seed already" in reports[0].message


@pytest.mark.parametrize(
    "body",
    [
        # another seed
        "torch.manual_seed(0)\ntorch.cuda.manual_seed(1)\n",
        # a statement between
        "torch.manual_seed(0)\nx = torch.randn(2)\ntorch.cuda.manual_seed(0)\n",
        # a seed that may change when read again
        "import random\ntorch.manual_seed(random.randint(0, 9))\n"
        "torch.cuda.manual_seed(random.randint(0, 9))\n",
        # before torch.manual_seed, not after it
        "torch.cuda.manual_seed(0)\ntorch.manual_seed(0)\n",
        # its comment would go with it
        "torch.manual_seed(0)\n# and the GPU\ntorch.cuda.manual_seed(0)\n",
        # a value, not a statement of its own
        "torch.manual_seed(0)\nx = torch.cuda.manual_seed(0)\n",
    ],
)
def test_a_seed_that_is_not_a_repeat_stays(body):
    code, reports = _rewrite(body)
    assert "torch.cuda.manual_seed(" in code
    assert reports and not any(r.applied for r in reports)


def test_a_seed_of_the_current_device_is_reported_not_ported():
    code, (report,) = _rewrite("torch.cuda.manual_seed(3)\n")
    assert code == "import torch\ntorch.cuda.manual_seed(3)\n"
    assert "seeds the current CUDA device only" in report.message
    assert not report.applied


def test_reseeding_at_random_is_reported():
    code, reports = _rewrite("torch.cuda.seed()\ntorch.cuda.seed_all()\n")
    assert code == "import torch\ntorch.cuda.seed()\ntorch.cuda.seed_all()\n"
    assert [r.applied for r in reports] == [False, False]


def test_manual_seed_all_seeds_every_device_and_keeps_the_cpu_state():
    import torch

    code, reports = _rewrite("torch.cuda.manual_seed_all(7)\n")
    assert code == (
        "import torch\n"
        "torch.set_rng_state([torch.get_rng_state(), torch.manual_seed(7)][0])\n"
    )
    assert "DEVICE" not in code and [r.applied for r in reports] == [True]
    torch.manual_seed(0)
    expected = torch.rand(4)
    torch.manual_seed(0)
    exec(code, {})
    assert torch.equal(torch.rand(4), expected)


def test_manual_seed_all_with_another_argument_is_reported():
    code, reports = _rewrite("torch.cuda.manual_seed_all(*seeds)\n")
    assert "torch.cuda.manual_seed_all(*seeds)" in code
    assert [r.applied for r in reports] == [False]
    assert "takes one seed" in reports[0].message
