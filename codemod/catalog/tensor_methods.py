"""Tensor and module methods that name CUDA (`.cuda()`, `.is_cuda`, pinning)."""

from __future__ import annotations

from typing import List

from codemod.catalog.rows import Row

ROWS: List[Row] = [
    Row(
        ("Tensor.cuda",),
        "TP201",
        "tensor_methods",
        ".to({device})",
        kind="method",
        trigger=r"\.cuda\b",
    ),
    Row(
        ("Tensor.is_cuda",),
        "TP202",
        "tensor_methods",
        '.device.type == {device}.type != "cpu"',
        kind="method",
        trigger="is_cuda",
    ),
    Row(
        ("Tensor.pin_memory",),
        "TP203",
        "tensor_methods",
        cpu="the tensor",
        kind="method",
        trigger="pin_memory",
    ),
    Row(
        ("pin_memory=True",),
        "TP203",
        "tensor_methods",
        '{device}.type != "cpu"',
        kind="keyword",
        trigger="pin_memory",
    ),
    Row(
        ("pin_memory=True passed on",),
        "TP204",
        "tensor_methods",
        kind="keyword",
        trigger="pin_memory",
    ),
    Row(
        ("Module.to after an optimizer",),
        "TP205",
        "tensor_methods",
        kind="method",
        trigger="parameters",
    ),
]
