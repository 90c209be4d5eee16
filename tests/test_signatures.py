"""The calls and names torchport emits exist in the installed torch and take the
arguments it passes them (checked against ``inspect.signature``)."""

from __future__ import annotations

import torch


def test_out_of_memory_error_is_one_class():
    # TP318 renames the exception only because this holds (torch >= 2.5).
    assert torch.cuda.OutOfMemoryError is torch.OutOfMemoryError
