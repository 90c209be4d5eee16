"""Mixed precision: `torch.cuda.amp` and the CUDA-named autocast helpers."""

from __future__ import annotations

from typing import Dict, List, Tuple

from codemod.catalog.rows import Row

# The device type an AMP call is given (torch.autocast, GradScaler, the autocast
# state): the accelerator's, and without one CUDA's, as the original had. On a CPU host
# CUDA's autocast and scaler disable themselves (with a warning) and the model computes
# in float32; the CPU's own autocast would compute in bfloat16 (float16 if asked).
AMP_DEVICE_TYPE = '{device}.type if {device}.type != "cpu" else "cuda"'
# The same read at import time (a decorator): the accelerator this build of torch has,
# which asks no device and does not initialise CUDA (torch >= 2.7: on 2.6
# current_accelerator() raises without one), else CUDA's. A CUDA build says "cuda"
# with or without a GPU, as the original did.
BUILT_AMP_DEVICE_TYPE = (
    '({torch}.accelerator.current_accelerator() or {torch}.device("cuda")).type'
)
BUILT_TYPE_TORCH = (2, 7)
# Generic AMP callables given a device type as a literal (the device-strings pass's
# positions): callee -> (the position of the device type, its keyword).
AMP_DEVICE_ARGUMENTS: Dict[str, Tuple[int, str]] = {
    "torch.autocast": (0, "device_type"),
    "torch.amp.autocast": (0, "device_type"),
    "torch.amp.autocast_mode.autocast": (0, "device_type"),
    "torch.amp.GradScaler": (0, "device"),
    "torch.amp.grad_scaler.GradScaler": (0, "device"),
    "torch.GradScaler": (0, "device"),
    "torch.amp.custom_fwd": (-1, "device_type"),  # keyword-only
    "torch.amp.custom_bwd": (-1, "device_type"),
    "torch.amp.autocast_mode.custom_fwd": (-1, "device_type"),
    "torch.amp.autocast_mode.custom_bwd": (-1, "device_type"),
    "torch.get_autocast_dtype": (0, "device_type"),
    "torch.is_autocast_enabled": (0, "device_type"),
    "torch.set_autocast_dtype": (0, "device_type"),
    "torch.set_autocast_enabled": (0, "device_type"),
    "torch.amp.is_autocast_available": (0, "device_type"),
    "torch.amp.autocast_mode.is_autocast_available": (0, "device_type"),
}

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
