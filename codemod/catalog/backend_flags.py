"""Backend flags: cuDNN, TF32, scaled-dot-product kernels."""

from __future__ import annotations

from typing import List

from codemod.catalog.rows import Row

ROWS: List[Row] = [
    Row(("torch.backends.cudnn.benchmark",), "TP601", "backend_flags", trigger="cudnn"),
    Row(
        ("torch.backends.cudnn.deterministic",),
        "TP602",
        "backend_flags",
        trigger="cudnn",
    ),
    Row(("torch.backends.cudnn.enabled",), "TP603", "backend_flags", trigger="cudnn"),
    Row(
        ("torch.backends.cuda.matmul.allow_tf32",),
        "TP604",
        "backend_flags",
        "{torch}.set_float32_matmul_precision",
    ),
    Row(
        ("torch.backends.cudnn.allow_tf32",), "TP605", "backend_flags", trigger="cudnn"
    ),
    Row(
        ("torch.backends.cuda.sdp_kernel",),
        "TP606",
        "backend_flags",
        "{torch}.nn.attention.sdpa_kernel",
    ),
    Row(
        ("torch.backends.cudnn",),
        "TP609",
        "backend_flags",
        kind="module",
        trigger="cudnn",
    ),
    Row(("torch.backends.cuda",), "TP609", "backend_flags", kind="module"),
]
