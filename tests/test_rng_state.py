"""``get_rng_state_all`` and ``set_rng_state_all`` written device by device
(codemod/passes/runtime/per_device.py, TP311)."""

from __future__ import annotations

import torch

from codemod.model.options import Options
from codemod.rewrite.pipeline import rewrite_source


def _rewrite(body: str, **options):
    options = dict(target_torch=(2, 13), **options)
    result = rewrite_source("import torch\n" + body, Options(**options))
    return result.code, [d for d in result.diagnostics if d.code == "TP311"]


def test_the_list_is_empty_without_an_accelerator():
    code, _ = _rewrite("states = torch.cuda.get_rng_state_all()\n")
    assert "for index in range(torch.accelerator.device_count())" in code
    namespace: dict = {}
    exec(code, namespace)  # noqa: S102 (our own output), on the CPU
    assert namespace["states"] == [] == torch.cuda.get_rng_state_all()


def test_the_loop_keeps_the_comments_and_uses_free_names():
    code, _ = _rewrite(
        "rng_state = 1\n"
        "# restore\n"
        "torch.cuda.set_rng_state_all(saved)  # every device\n",
        unsafe_fixes=True,  # at import, where the original asked no device
    )
    assert (
        "# restore\n"
        'if _DEVICE().type != "cpu":\n'
        "    for device_index, rng_state2 in enumerate(saved):\n"
        "        torch.get_device_module(_DEVICE()).set_rng_state(rng_state2, "
        "device_index)  # every device\n"
    ) in code


def test_no_guard_inside_an_accelerated_branch():
    code, _ = _rewrite(
        "if torch.cuda.is_available():\n    torch.cuda.set_rng_state_all(saved)\n"
    )
    assert "if torch.accelerator.is_available():\n    for device_index" in code


def test_set_rng_state_all_other_than_a_statement_is_reported():
    for body in (
        "done = torch.cuda.set_rng_state_all(saved)\n",
        "x = 1; torch.cuda.set_rng_state_all(saved)\n",
        "torch.cuda.set_rng_state_all(*saved)\n",
    ):
        code, reports = _rewrite(body)
        assert "torch.cuda.set_rng_state_all(" in code, body
        assert reports and not reports[0].applied, body
