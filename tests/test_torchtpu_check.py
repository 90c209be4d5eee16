"""scripts/torchtpu_check.py without TorchTPU: how it reads the evidence table and what
it calls a mismatch with the live torch.tpu module."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from codemod.catalog.backends import IDIOMS, UNKNOWN, YES
from tests.fixture_cases import ROOT


@pytest.fixture(scope="module")
def check():
    sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location(
        "torchtpu_check", ROOT / "scripts" / "torchtpu_check.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_device_module_idioms_name_their_attribute(check):
    assert (
        check._device_module_attribute(
            "torch.get_device_module(_DEVICE()).manual_seed_all(seed)"
        )
        == "manual_seed_all"
    )
    assert (
        check._device_module_attribute(
            "with torch.get_device_module(_DEVICE()).stream(s):"
        )
        == "stream"
    )
    assert check._device_module_attribute("torch.accelerator.empty_cache()") is None


def _as_the_table_says():
    attributes = {}
    for idiom, row in IDIOMS.items():
        name = idiom.split("torch.get_device_module(_DEVICE()).")[-1].split("(")[0]
        if "get_device_module" in idiom and row["tpu"].status != UNKNOWN:
            attributes[name] = row["tpu"].status == YES
    return attributes


def test_no_mismatch_when_torch_tpu_agrees(check):
    attributes = _as_the_table_says()
    assert attributes["manual_seed_all"] and attributes["get_rng_state"]
    assert check.evidence_mismatches(attributes) == []


def test_a_missing_attribute_is_a_mismatch(check):
    attributes = dict(_as_the_table_says(), manual_seed_all=False)
    del attributes["get_rng_state"]
    wrong = check.evidence_mismatches(attributes)
    assert len(wrong) == 2
    assert any("manual_seed_all" in line and "lacks" in line for line in wrong)
    assert any("get_rng_state" in line and "lacks" in line for line in wrong)
