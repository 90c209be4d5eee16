"""Tables of code keyed by device type are reported at their "cuda" key
(passes/device_tables.py): another accelerator finds no entry in them."""

from __future__ import annotations

import libcst as cst
import pytest

from codemod.passes.device_tables import keyed_by_devices


def _key(code: str):
    key = keyed_by_devices(cst.parse_expression(code))
    return None if key is None else key.evaluated_value


@pytest.mark.parametrize(
    "code",
    [
        '{"cuda": torch.cuda.empty_cache, "cpu": None}',
        '{"cpu": f, "cuda": g, "xpu": h}',
        '{"cuda": lambda: sync(), "mps": None}',
        '{"cuda": make(), "cpu": 0}',
    ],
)
def test_a_table_of_code_keyed_by_devices_is_reported(code):
    assert _key(code) == "cuda"


@pytest.mark.parametrize(
    "code",
    [
        '{"cuda": 0, "cpu": 1}',  # data
        '{"cuda": "nccl", "cpu": "gloo"}',  # data (TP503 says the rest)
        '{"cuda": f, "default": g}',  # not every key is a device
        '{"cuda": f, **more}',  # more keys, maybe the accelerator's
        '{"cuda": f, key: g}',
        '{"cuda": f}',  # CUDA's alone
        '{"cpu": f, "xpu": g}',
    ],
)
def test_other_tables_are_not(code):
    assert _key(code) is None
