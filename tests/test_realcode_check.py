"""scripts/realcode_check.py: what it counts as a text change or a change outside
torchport's business."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import realcode_check  # noqa: E402


def test_the_cpu_of_a_device_choice_goes_with_it():
    before = b'import torch\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\n'
    after = b"import torch\ndevice = _DEVICE().type\n"
    assert realcode_check.text_changes(before, after) == []


def test_any_other_cpu_string_is_a_text_change():
    before = b'import torch\nname = "cpu" if flag else "gpu"\nx = "cpu"\n'
    after = b"import torch\nname = flag\nx = 1\n"
    changes = realcode_check.text_changes(before, after)
    assert sorted(changes) == [
        "string literal changed: 'cpu'",
        "string literal changed: 'cpu'",
        "string literal changed: 'gpu'",
    ]


def test_the_deprecated_cpu_amp_is_torchports_business():
    assert realcode_check._may_change(b"with torch.cpu.amp.autocast():\n    pass\n")
    assert realcode_check._may_change(b"backend = 'nccl'\n")
    assert not realcode_check._may_change(b"x = torch.ones(2)\n")
