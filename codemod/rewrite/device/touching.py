"""What CUDA calls and device-selecting writes look like, call by call: the tables
``timing`` judges a statement by, kept apart from its walk over the module.
"""

from __future__ import annotations

import ast
import re
from typing import Optional

from codemod.passes.names import ModuleFacts

# torch.cuda functions and classes that query or initialise CUDA when called, as
# torch 2.13's source shows (tests/test_timing.py reads it again): they call
# _lazy_init, is_available, device_count or current_device, or enter a device
# context, themselves or through one another. The others (manual_seed,
# memory_allocated, empty_cache, Event, nvtx, ...) are lazy or answer without CUDA.
TOUCHING = {
    "is_available",
    "device_count",
    "current_device",
    "set_device",  # torch._C._cuda_setDevice initialises CUDA (compiled code)
    "device",
    "synchronize",
    "get_device_name",
    "get_device_properties",
    "get_device_capability",
    "is_bf16_supported",
    "mem_get_info",
    "init",
    "Stream",
    "ExternalStream",
    "StreamContext",
    "stream",
    "current_stream",
    "default_stream",
    "get_rng_state",
    "get_rng_state_all",
    "set_rng_state",
    "initial_seed",
    "caching_allocator_alloc",
    "can_device_access_peer",
    "cudart",
    "current_blas_handle",
    "current_solver_handle",
    "get_per_process_memory_fraction",
    "set_per_process_memory_fraction",
    "get_stream_from_external",
    "get_sync_debug_mode",
    "set_sync_debug_mode",
    "ipc_collect",
    "use_mem_pool",
}
# Other callables that ask whether CUDA is available (a CUDA scaler or autocast
# warns when it is not); torch.autocast only with a CUDA device type.
TOUCHING_ELSEWHERE = {
    "torch.cuda.amp.GradScaler",
    "torch.cuda.amp.autocast",
    "torch.amp.GradScaler",
    "torch.GradScaler",
    "torch.random.fork_rng",  # counts the devices, saves their generators' states
}
# Variables that select which devices a process sees: read when CUDA initialises.
DEVICE_SELECTION = {
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "NVIDIA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "ZE_AFFINITY_MASK",
    "PYTORCH_NVML_BASED_CUDA_CHECK",
}
FORKING = {
    "os.fork",
    "os.forkpty",
    "multiprocessing.Process",
    "multiprocessing.Pool",
    "multiprocessing.set_start_method",
    "torch.multiprocessing.Process",
    "torch.multiprocessing.Pool",
    "torch.multiprocessing.set_start_method",
    "concurrent.futures.ProcessPoolExecutor",
}
LEGACY_TYPE = re.compile(r"torch\.cuda\.[A-Z]\w*Tensor")


def names_cuda(node: ast.AST) -> bool:
    """A CUDA device written out: ``"cuda"``, ``"cuda:1"``, ``torch.device("cuda")``,
    ``torch.device(type="cuda")``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value == "cuda" or node.value.startswith("cuda:")
    if isinstance(node, ast.Call) and node.args:
        return names_cuda(node.args[0])
    if isinstance(node, ast.Call):
        return any(k.arg == "type" and names_cuda(k.value) for k in node.keywords)
    return False


def disabled(call: ast.Call) -> bool:
    """An autocast or scaler made with ``enabled=False``: it asks nothing (torch
    asks whether CUDA is available only to warn that an enabled one cannot be)."""
    return any(
        k.arg == "enabled"
        and isinstance(k.value, ast.Constant)
        and k.value.value is False
        for k in call.keywords
    )


def names_other_device(call: ast.Call) -> bool:
    """A scaler made for a device written out that is not CUDA (``"cpu"``)."""
    first = call.args[0] if call.args else None
    for keyword in call.keywords:
        if keyword.arg == "device":
            first = keyword.value
    return (
        isinstance(first, ast.Constant)
        and isinstance(first.value, str)
        and not names_cuda(first)
    )


def is_environ(node: ast.AST, facts: ModuleFacts) -> bool:
    return facts.qualified_name(node) == "os.environ"


def selection_key(node: Optional[ast.AST]) -> bool:
    return isinstance(node, ast.Constant) and node.value in DEVICE_SELECTION
