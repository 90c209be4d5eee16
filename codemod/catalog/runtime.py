"""The ``torch.cuda`` runtime API: each name, the rule that covers it, and its
portable form (``{torch}`` and ``{device}`` are filled in by the pass), with the
torch release that form needs where it is not ``torch.accelerator``'s (the memory
statistics, ``get_memory_info``, ``device_index``, ``torch.OutOfMemoryError``; their
rules document the same releases, ``codemod.rules.runtime``)."""

from __future__ import annotations

from typing import Dict, List, Tuple

from codemod.catalog.rows import Param, Row
from codemod.catalog.tensor_types import TENSOR_TYPES
from codemod.model.versions import (
    DEVICE_INDEX_TORCH,
    MEMORY_INFO_TORCH,
    MEMORY_TORCH,
    OOM_ERROR_TORCH,
    STREAM_CONTEXT_TORCH,
)

_ACC = "{torch}.accelerator."
_MOD = "{torch}.get_device_module({device})."
GUARD_ADVICE = 'guard it with `if _DEVICE().type == "cuda":`'
DIAGNOSTIC = (
    'CUDA diagnostics; guard it with `if _DEVICE().type == "cuda":` or use '
    "`torch.accelerator.memory_stats()` (torch >= 2.9)"
)
ALLOCATOR = (
    'CUDA caching-allocator setting; guard it with `if _DEVICE().type == "cuda":`'
)
UNKNOWN_ADVICE = (
    "no portable equivalent known to torchport; guard it with "
    '`if _DEVICE().type == "cuda":` or replace it by hand'
)
NVTX_PAIR = (
    "nvtx push/pop exist only in CUDA builds; pair them into "
    "`with torch.profiler.record_function(name):`"
)


def _runtime(
    name: str, code: str, portable=None, cpu=None, rewrite="call", min_torch=None
) -> Row:
    names = (f"torch.cuda.{name}",)
    return Row(
        names, code, "cuda_runtime", portable, cpu, rewrite=rewrite, min_torch=min_torch
    )


ONE_DEVICE = (
    "seeds the current CUDA device only, and no accelerator API seeds one device; "
    "left as it is (a no-op without CUDA). `torch.manual_seed(seed)` seeds the CPU "
    "and every device; after it, `torch.cuda.manual_seed(seed)` is not needed"
)
RESEED = (
    "reseeds CUDA from a random seed, and no accelerator API reseeds a device; left "
    "as it is (a no-op without CUDA). `torch.seed()` reseeds the CPU and every device"
)


def _seed(name: str, portable=None, cpu=None, advice: str = "") -> Row:
    """A CUDA seed (TP310), removed where it repeats torch.manual_seed."""
    names = (f"torch.cuda.{name}",)
    return Row(names, "TP310", "cuda_runtime", portable, cpu, "name", "seed", advice)


def _memory(name: str, portable: str, cpu: str) -> Row:
    """A memory statistic (TP308): its torch.accelerator form needs torch 2.9."""
    return _runtime(name, "TP308", _ACC + portable, cpu, min_torch=MEMORY_TORCH)


def _no_portable_form(advice: str, *names: str) -> List[Row]:
    return [
        Row(
            (f"torch.cuda.{n}",),
            "TP390",
            "cuda_runtime",
            rewrite="report",
            advice=advice,
        )
        for n in names
    ]


# The parameters of the torch.cuda functions whose portable form is another function
# (tests/test_signatures.py checks them against the installed torch's signatures).
_DEVICE = (Param("device", positional_only=True),)  # `device_index, /` in accelerator
PARAMS: Dict[str, Tuple[Param, ...]] = {
    **{
        f"torch.cuda.{name}": ()
        for name in ("is_available", "device_count", "current_device", "empty_cache")
    },
    "torch.cuda.set_device": _DEVICE,
    "torch.cuda.synchronize": _DEVICE,
    "torch.cuda.device": (Param("device", positional_only=True, index_only=True),),
    # the shape writes the index itself, from the object's device
    "torch.cuda.device_of": (Param("obj", positional_only=True),),
    "torch.cuda.set_stream": (Param("stream"),),
    "torch.cuda.current_stream": _DEVICE,
    "torch.cuda.Stream": (Param("device"), Param("priority", keyword_only=True)),
    # torch.Event takes blocking and interprocess but ignores them (its
    # documentation says so from torch 2.8), and has no external.
    "torch.cuda.Event": (
        Param("enable_timing", keyword_only=True),
        *(
            Param(name, keyword_only=True, default_only=True)
            for name in ("blocking", "interprocess", "external")
        ),
    ),
    **{
        f"torch.cuda.{name}": _DEVICE
        for name in (
            "memory_allocated",
            "max_memory_allocated",
            "memory_reserved",
            "max_memory_reserved",
            "memory_cached",
            "max_memory_cached",
            "memory_stats",
            "reset_peak_memory_stats",
            "reset_max_memory_allocated",
            "reset_max_memory_cached",
            "reset_accumulated_memory_stats",
            "mem_get_info",
        )
    },
}

ROWS: List[Row] = [
    _runtime("is_available", "TP301", _ACC + "is_available"),
    _runtime("device_count", "TP301", _ACC + "device_count"),
    _runtime("current_device", "TP302", _ACC + "current_device_index", "0"),
    _runtime("set_device", "TP302", _ACC + "set_device_index", "None"),
    # `device=x.get_device()`: -1 for a CPU tensor, which no device argument takes.
    Row(
        ("Tensor.get_device",),
        "TP302",
        "cuda_runtime",
        ".device",
        kind="method",
        rewrite="index_as_device",
        trigger=r"get_device\(",
    ),
    _runtime(
        "device",
        "TP303",
        _ACC + "device_index",
        rewrite="device_index",
        min_torch=DEVICE_INDEX_TORCH,
    ),
    _runtime(
        "device_of",
        "TP303",
        _ACC + "device_index",
        rewrite="device_of",
        min_torch=DEVICE_INDEX_TORCH,
    ),
    # torch.accelerator.synchronize raises without an accelerator: a no-op there.
    _runtime("synchronize", "TP304", _ACC + "synchronize", "None"),
    # torch.Stream, torch.Event and torch.accelerator's streams: what every
    # accelerator implements. On the CPU torch.cpu's no-op stand-ins (a CPU
    # torch.Stream cannot wait_stream, a CPU torch.Event cannot record).
    _runtime(
        "Stream", "TP305", "{torch}.Stream", "{torch}.cpu.Stream()", "stream_object"
    ),
    _runtime(
        "current_stream",
        "TP305",
        _ACC + "current_stream",
        "{torch}.cpu.current_stream()",
        "stream_object",
    ),
    # `with torch.cuda.stream(s):` -> `with s:` (torch.Stream is a context manager).
    _runtime(
        "stream",
        "TP305",
        "{torch}.cpu.stream",
        rewrite="stream_context",
        min_torch=STREAM_CONTEXT_TORCH,
    ),
    _runtime("set_stream", "TP305", _ACC + "set_stream", "None"),
    Row(
        ("torch.cuda.default_stream",),
        "TP305",
        "cuda_runtime",
        rewrite="report",
        advice="no accelerator has a portable default stream; "
        "`torch.accelerator.current_stream()` is the same stream outside any "
        "`with stream:` block or `set_stream`",
    ),
    _runtime("Event", "TP306", "{torch}.Event", "{torch}.cpu.Event()", "stream_object"),
    Row(
        ("Event.elapsed_time",),
        "TP307",
        "cuda_runtime",
        None,
        'float("nan")',
        kind="method",
        rewrite="object_method",
        trigger="elapsed_time",
    ),
    # Methods of a CUDA stream (known by its binding) that torch.cpu's no-op stream
    # lacks, and record_stream, which no CPU tensor has: kept for accelerators.
    Row(
        ("Stream.synchronize",),
        "TP305",
        "cuda_runtime",
        cpu="None",
        kind="method",
        rewrite="object_method",
    ),
    Row(
        ("Stream.query",),
        "TP305",
        "cuda_runtime",
        cpu="True",
        kind="method",
        rewrite="object_method",
    ),
    Row(
        ("Tensor.record_stream",),
        "TP305",
        "cuda_runtime",
        cpu="None",
        kind="method",
        rewrite="object_method",
    ),
    _memory("empty_cache", "empty_cache", "None"),
    _memory("memory_allocated", "memory_allocated", "0"),
    _memory("max_memory_allocated", "max_memory_allocated", "0"),
    _memory("memory_reserved", "memory_reserved", "0"),
    _memory("max_memory_reserved", "max_memory_reserved", "0"),
    _memory("memory_cached", "memory_reserved", "0"),
    _memory("max_memory_cached", "max_memory_reserved", "0"),
    _memory("memory_stats", "memory_stats", "{}"),
    _memory("reset_peak_memory_stats", "reset_peak_memory_stats", "None"),
    # Both old names have reset every peak statistic since torch 1.4.
    _memory("reset_max_memory_allocated", "reset_peak_memory_stats", "None"),
    _memory("reset_max_memory_cached", "reset_peak_memory_stats", "None"),
    _memory("reset_accumulated_memory_stats", "reset_accumulated_memory_stats", "None"),
    _runtime(
        "mem_get_info",
        "TP309",
        _ACC + "get_memory_info",
        "(0, 0)",
        min_torch=MEMORY_INFO_TORCH,
    ),
    # Removed where they repeat torch.manual_seed(x) (codemod.passes.runtime.seeds).
    # manual_seed seeds the current CUDA device only: no accelerator API seeds one
    # device (torch.mps and torch.tpsim have no manual_seed_all either).
    _seed("manual_seed", advice=ONE_DEVICE),
    # torch.manual_seed seeds every device as manual_seed_all does (torch.mps has
    # no manual_seed_all); the CPU's state is put back around it (passes.runtime.seeds).
    _seed("manual_seed_all", "{torch}.manual_seed"),
    *(
        Row(
            (f"torch.cuda.{name}",),
            "TP310",
            "cuda_runtime",
            rewrite="report",
            advice=RESEED,
        )
        for name in ("seed", "seed_all")
    ),
    _runtime("get_rng_state", "TP311", _MOD + "get_rng_state", "None"),
    _runtime("set_rng_state", "TP311", _MOD + "set_rng_state", "None"),
    # Device by device, with the per-device functions (codemod.passes.runtime.per_device).
    _runtime("get_rng_state_all", "TP311", rewrite="rng_state_all"),
    _runtime("set_rng_state_all", "TP311", rewrite="rng_state_all"),
    Row(
        ("torch.random.fork_rng",),
        "TP312",
        "cuda_runtime",
        rewrite="fork_rng",
        trigger="fork_rng",
    ),
    # No accelerator API names a device: kept for CUDA, the device type elsewhere.
    Row(
        ("torch.cuda.get_device_name",),
        "TP314",
        "cuda_runtime",
        "{device}.type",
        rewrite="cuda_kept",
        advice="no accelerator API names a device; the fix keeps the call for CUDA "
        "and names the device by its type elsewhere",
    ),
    *_no_portable_form(
        ALLOCATOR,
        "get_per_process_memory_fraction",
        "caching_allocator_alloc",
        "caching_allocator_delete",
    ),
    *_no_portable_form(
        DIAGNOSTIC,
        "memory_summary",
        "memory_snapshot",
        "memory_stats_as_nested_dict",
        "list_gpu_processes",
        "utilization",
        "memory_usage",
        "temperature",
        "power_draw",
        "clock_rate",
    ),
    *_no_portable_form(
        "device properties differ by backend; guard it with "
        '`if _DEVICE().type == "cuda":` or keep only the fields you need '
        "(`.total_memory`: `torch.accelerator.get_memory_info(i)[1]`, torch >= 2.10, "
        "which makes a context on device i where reading properties does not)",
        "get_device_properties",
    ),
    *_no_portable_form(
        "no portable form before `torch.accelerator.random.initial_seed()` "
        "(torch >= 2.14, raises on the CPU)",
        "initial_seed",
    ),
    *_no_portable_form("CUDA initializes lazily; remove it or guard it", "init"),
    *_no_portable_form(
        'CUDA-only state; guard it with `_DEVICE().type == "cuda"`', "is_initialized"
    ),
    # The same class since torch 2.5 (tests/test_signatures.py checks it).
    Row(
        ("torch.cuda.OutOfMemoryError",),
        "TP318",
        "cuda_runtime",
        "{torch}.OutOfMemoryError",
        rewrite="name",
        min_torch=OOM_ERROR_TORCH,
    ),
    # The rest of torch.cuda's public API: CUDA-only, reported with the general advice.
    *_no_portable_form(
        UNKNOWN_ADVICE,
        *(f"{t}Storage" for t in TENSOR_TYPES if t != "BFloat16"),
        "BFloat16Storage",
        "ComplexDoubleStorage",
        "ComplexFloatStorage",
        "CudaError",
        "DeferredCudaCallError",
        "ExternalStream",
        "StreamContext",
        "GreenContext",
        "green_contexts",
        "caching_allocator_disabled",
        "caching_allocator_enable",
        "can_device_access_peer",
        "check_error",
        "cudaStatus",
        "current_blas_handle",
        "current_solver_handle",
        "default_generators",
        "device_memory_used",
        "get_allocator_backend",
        "CUDAPluggableAllocator",
        "change_current_allocator",
        "get_gencode_flags",
        "get_stream_from_external",
        "get_sync_debug_mode",
        "has_half",
        "has_magma",
        "host_memory_stats",
        "host_memory_stats_as_nested_dict",
        "reset_accumulated_host_memory_stats",
        "reset_peak_host_memory_stats",
        "is_tf32_supported",
        "MemPool",
        "use_mem_pool",
        "sparse",
        "tunable",
        "gds",
        "profiler",
        "jiterator",
        "comm",
        "nccl",
    ),
]
