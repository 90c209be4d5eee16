"""The ``torch.cuda`` queries that raise where there is no CUDA (a CPU build, a CUDA
build without a GPU, any other accelerator), and what each becomes where its value
only goes into text or decides a capability test (``codemod.passes.cuda_queries``).

Checked on CPU PyTorch 2.13: each of ``MESSAGE_QUERIES`` raises without CUDA (an
``AssertionError`` "Torch not compiled with CUDA enabled", a ``RuntimeError`` on a
CUDA build without a GPU, a ``KeyError`` from ``memory_summary``, a
``ModuleNotFoundError`` from the NVML ones). The memory statistics
(``memory_allocated``, ...) and ``list_gpu_processes`` are not here: they answer 0,
``{}`` or a sentence without CUDA, so a program printing them already runs (TP308
ports them). Pure data.
"""

from __future__ import annotations

from typing import Dict, List

from codemod.catalog.rows import Row

# Elsewhere, a message names the device by its type: every backend has one, and it
# never raises. (`torch.accelerator.get_memory_info()` is not used for
# `mem_get_info()`: a backend that does not implement it would make the message
# raise, and a CPU host has none.)
DEVICE_TYPE = "{device}.type"
MESSAGE_QUERIES: Dict[str, str] = {
    f"torch.cuda.{name}": DEVICE_TYPE
    for name in (
        "get_device_name",
        "get_device_capability",
        "get_device_properties",
        "mem_get_info",
        "memory_summary",
        "get_per_process_memory_fraction",
        "utilization",
        "memory_usage",
        "temperature",
        "power_draw",
        "clock_rate",
        "device_memory_used",
    )
}
# What a capability test reads: `get_device_capability()` (or an element of it)
# and `get_device_properties(i).major` / `.minor`.
CAPABILITY = "torch.cuda.get_device_capability"
PROPERTIES = "torch.cuda.get_device_properties"
SM_FIELDS = ("major", "minor")
BF16 = "torch.cuda.is_bf16_supported"
# The accelerator's own answer to "is bfloat16 the precision to choose here":
# the dtype its autocast computes in (torch >= 2.4; bfloat16 on TorchTPU, XLA and
# HPU, float16 on MPS and an unconfigured PrivateUse1 backend). False on the CPU,
# as torch.cuda.is_bf16_supported() is there.
BF16_ELSEWHERE = (
    '{device}.type != "cpu" and {torch}.get_autocast_dtype({device}.type) == '
    "{torch}.bfloat16"
)

# Each query's text position as a form row of the pass (the trigger: the words a
# line holding it has; an imported `get_device_name` need not say "cuda").
_TRIGGERS = ("get_device_name", "get_device_capability", "get_device_properties")
ROWS: List[Row] = [
    Row(
        (f"{name}(...) in a message",),
        "TP315",
        "cuda_queries",
        kind="form",
        trigger=name.rsplit(".", 1)[1] if name.endswith(_TRIGGERS) else "cuda",
    )
    for name in MESSAGE_QUERIES
] + [
    Row(
        (f"{CAPABILITY}() compared",),
        "TP316",
        "cuda_queries",
        kind="form",
        trigger="get_device_capability",
    ),
    Row(
        (f"{PROPERTIES}(i).major compared",),
        "TP316",
        "cuda_queries",
        kind="form",
        trigger="get_device_properties",
    ),
    Row((f"{BF16}()",), "TP317", "cuda_queries", kind="form", trigger="bf16"),
]
