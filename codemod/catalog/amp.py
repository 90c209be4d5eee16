"""Mixed precision: `torch.cuda.amp` and the CUDA-named autocast helpers."""

from __future__ import annotations

from typing import List

from codemod.catalog.rows import Row

# The amp pass's own table (codemod.passes.amp.MAPPINGS) says how each is rewritten.
ROWS: List[Row] = [
    Row(
        ("torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"),
        "TP401",
        "amp",
        "{torch}.autocast",
        trigger=r"\bamp\b",
    ),
    Row(
        ("torch.cuda.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler"),
        "TP402",
        "amp",
        "{torch}.amp.GradScaler",
        trigger="GradScaler",
    ),
    Row(
        ("torch.cuda.amp.custom_fwd", "torch.cuda.amp.autocast_mode.custom_fwd"),
        "TP403",
        "amp",
        "{torch}.amp.custom_fwd",
        trigger=r"\bamp\b",
    ),
    Row(
        ("torch.cuda.amp.custom_bwd", "torch.cuda.amp.autocast_mode.custom_bwd"),
        "TP403",
        "amp",
        "{torch}.amp.custom_bwd",
        trigger=r"\bamp\b",
    ),
    Row(
        ("torch.get_autocast_gpu_dtype",),
        "TP404",
        "amp",
        "{torch}.get_autocast_dtype",
        trigger="autocast",
    ),
    Row(("torch.is_autocast_enabled",), "TP404", "amp", trigger="autocast"),
    Row(
        ("torch.set_autocast_gpu_dtype",),
        "TP404",
        "amp",
        "{torch}.set_autocast_dtype",
        trigger="autocast",
    ),
    Row(("torch.set_autocast_enabled",), "TP404", "amp", trigger="autocast"),
    Row(
        ("torch.cpu.amp.autocast", "torch.cpu.amp.autocast_mode.autocast"),
        "TP405",
        "amp",
        "{torch}.autocast",
        trigger=r"\bamp\b",
    ),
    Row(
        ("torch.cpu.amp.GradScaler", "torch.cpu.amp.grad_scaler.GradScaler"),
        "TP406",
        "amp",
        "{torch}.amp.GradScaler",
        trigger="GradScaler",
    ),
    Row(
        (
            "torch.amp.GradScaler",
            "torch.amp.grad_scaler.GradScaler",
            "torch.GradScaler",
        ),
        "TP407",
        "amp",
        trigger="GradScaler",
    ),
    Row(("torch.cuda.amp",), "TP409", "amp", kind="module", trigger=r"\bamp\b"),
    Row(("torch.cpu.amp",), "TP409", "amp", kind="module", trigger=r"\bamp\b"),
]
