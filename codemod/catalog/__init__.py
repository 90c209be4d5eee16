"""The catalogue: every CUDA-specific name and form torchport knows, as data.

One row per site kind: the qualified name(s) it is written as, the rule that reports
or rewrites it, the pass that owns it, the portable form it becomes (a template with
``{torch}`` and ``{device}``), what that form is on a machine without an accelerator,
and the words a file must contain to hold it (the byte prefilter's and each pass's
trigger). The fix kind and the torch release the fix needs are the rule's
(``codemod.rules``), looked up by code.

Everything else is derived from here: each pass's trigger and tables, the names one
pass leaves to another, the CUDA-only libraries a guard protects, ``engine.PREFILTER``,
the README's rule tables and ``docs/rules.md``. Adding a ``torch.cuda.X ->
torch.accelerator.X`` mapping is one row here plus one fixture pair.

No libcst here: the engine reads the prefilter at start-up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Tuple

# The passes, in the order they run (codemod.passes.PASSES follows it).
PASS_ORDER = (
    "device_strings",
    "tensor_methods",
    "amp",
    "cuda_runtime",
    "tensor_types",
    "distributed",
    "backend_flags",
    "report_only",
)


@dataclass(frozen=True)
class Param:
    """A parameter of a ``torch.cuda`` function, as its portable form takes it.

    ``positional_only``: the portable form takes it by position only (a keyword is
    moved to its position). ``index_only``: the portable form takes an int index and
    no ``torch.device`` or string, so only an int literal (or None) is exact.
    """

    name: str
    positional_only: bool = False
    index_only: bool = False


@dataclass(frozen=True)
class Row:
    """One CUDA-specific name (or form) and what torchport does with it.

    ``kind``: "name" (a qualified name, the first of ``names``; the others are
    aliases), "module" (the name and everything below it, at a dot), "method" (an
    attribute of any receiver), "keyword", "string" (a literal) or "form" (a shape
    of code, described in ``names``). ``portable``: the replacement template (None:
    reported only). ``cpu``: the value of the portable form on a machine without an
    accelerator when it would raise there ("None": a statement, skipped).
    ``shape``: the owning pass's rewrite for it. ``advice``: said with the report.
    ``params`` (from ``PARAMS``): how the portable form takes the call's arguments.
    """

    names: Tuple[str, ...]
    code: str
    owner: str
    portable: Optional[str] = None
    cpu: Optional[str] = None
    kind: str = "name"
    shape: str = "call"
    advice: str = ""
    trigger: str = "cuda"  # regex fragment a line holding it matches

    @property
    def name(self) -> str:
        return self.names[0]

    @property
    def params(self) -> Optional[Tuple[Param, ...]]:
        """The CUDA call's parameters, in order, as the portable form takes them;
        None: the arguments are passed on as written (the portable form is the same
        function on CUDA, as the device module's are)."""
        return PARAMS.get(self.name)

    @property
    def rule(self):
        """The rule's fix kind, minimum torch and documentation (``codemod.rules``)."""
        from codemod.rules import all_rules

        return all_rules()[self.code]


_ACC = "{torch}.accelerator."
_MOD = "{torch}.get_device_module({device})."
GUARD_ADVICE = 'guard it with `if DEVICE.type == "cuda":`'
DIAGNOSTIC = (
    'CUDA diagnostics; guard it with `if DEVICE.type == "cuda":` or use '
    "`torch.accelerator.memory_stats()` (torch >= 2.9)"
)
ALLOCATOR = 'CUDA caching-allocator setting; guard it with `if DEVICE.type == "cuda":`'
UNKNOWN_ADVICE = (
    "no portable equivalent known to torchport; guard it with "
    '`if DEVICE.type == "cuda":` or replace it by hand'
)
NVTX_PAIR = (
    "nvtx push/pop exist only in CUDA builds; pair them into "
    "`with torch.profiler.record_function(name):`"
)


def _runtime(name: str, code: str, portable=None, cpu=None, shape="call") -> Row:
    names = (f"torch.cuda.{name}",)
    return Row(names, code, "cuda_runtime", portable, cpu, shape=shape)


def _no_portable_form(advice: str, *names: str) -> List[Row]:
    return [
        Row(
            (f"torch.cuda.{n}",), "TP390", "cuda_runtime", shape="report", advice=advice
        )
        for n in names
    ]


# Legacy tensor types -> dtype (TP313).
TENSOR_TYPES = {
    "Float": "float32",
    "Double": "float64",
    "Half": "float16",
    "BFloat16": "bfloat16",
    "Long": "int64",
    "Int": "int32",
    "Short": "int16",
    "Char": "int8",
    "Byte": "uint8",
    "Bool": "bool",
}

# The parameters of the torch.cuda functions whose portable form is another function
# (tests/test_signatures.py checks them against the installed torch's signatures).
_DEVICE = (Param("device", positional_only=True),)  # `device_index, /` in accelerator
PARAMS: Dict[str, Tuple[Param, ...]] = {
    **{
        f"torch.cuda.{name}": ()
        for name in ("is_available", "device_count", "current_device", "empty_cache")
    },
    "torch.cuda.set_device": _DEVICE,
    "torch.cuda.device": (Param("device", positional_only=True, index_only=True),),
    "torch.cuda.set_stream": (Param("stream"),),
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

RUNTIME: List[Row] = [
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
        trigger=r"get_device\(",
    ),
    _runtime("device", "TP303", _ACC + "device_index", shape="device_index"),
    _runtime("synchronize", "TP304", _MOD + "synchronize"),
    # torch.cpu.Stream takes a priority only: a stream of a device is CPU's no-op one.
    _runtime("Stream", "TP305", _MOD + "Stream", "{torch}.cpu.Stream()", "stream"),
    _runtime("current_stream", "TP305", _MOD + "current_stream"),
    _runtime("stream", "TP305", _MOD + "stream"),
    _runtime("set_stream", "TP305", _ACC + "set_stream", "None"),
    # On the CPU every torch.cpu stream is the same no-op.
    _runtime(
        "default_stream",
        "TP305",
        _MOD + "default_stream",
        "{torch}.cpu.current_stream()",
    ),
    _runtime("Event", "TP306", _MOD + "Event", "{torch}.cpu.Event()"),
    Row(
        ("Event.elapsed_time",),
        "TP307",
        "cuda_runtime",
        None,
        'float("nan")',
        kind="method",
        trigger="elapsed_time",
    ),
    # Methods of a CUDA stream (known by its binding) that torch.cpu's no-op stream
    # lacks, and record_stream, which no CPU tensor has: kept for accelerators.
    Row(("Stream.synchronize",), "TP305", "cuda_runtime", cpu="None", kind="method"),
    Row(("Stream.query",), "TP305", "cuda_runtime", cpu="True", kind="method"),
    Row(("Tensor.record_stream",), "TP305", "cuda_runtime", cpu="None", kind="method"),
    _runtime("empty_cache", "TP308", _ACC + "empty_cache", "None"),
    _runtime("memory_allocated", "TP308", _ACC + "memory_allocated", "0"),
    _runtime("max_memory_allocated", "TP308", _ACC + "max_memory_allocated", "0"),
    _runtime("memory_reserved", "TP308", _ACC + "memory_reserved", "0"),
    _runtime("max_memory_reserved", "TP308", _ACC + "max_memory_reserved", "0"),
    _runtime("memory_cached", "TP308", _ACC + "memory_reserved", "0"),
    _runtime("max_memory_cached", "TP308", _ACC + "max_memory_reserved", "0"),
    _runtime("memory_stats", "TP308", _ACC + "memory_stats", "{}"),
    _runtime(
        "reset_peak_memory_stats", "TP308", _ACC + "reset_peak_memory_stats", "None"
    ),
    # Both old names have reset every peak statistic since torch 1.4.
    _runtime(
        "reset_max_memory_allocated", "TP308", _ACC + "reset_peak_memory_stats", "None"
    ),
    _runtime(
        "reset_max_memory_cached", "TP308", _ACC + "reset_peak_memory_stats", "None"
    ),
    _runtime(
        "reset_accumulated_memory_stats",
        "TP308",
        _ACC + "reset_accumulated_memory_stats",
        "None",
    ),
    _runtime("mem_get_info", "TP309", _ACC + "get_memory_info", "(0, 0)"),
    _runtime("manual_seed", "TP310", _MOD + "manual_seed", "None"),
    _runtime("manual_seed_all", "TP310", _MOD + "manual_seed_all", "None"),
    _runtime("seed", "TP310", _MOD + "seed", "None"),
    _runtime("seed_all", "TP310", _MOD + "seed_all", "None"),
    _runtime("get_rng_state", "TP311", _MOD + "get_rng_state", "None"),
    _runtime("set_rng_state", "TP311", _MOD + "set_rng_state", "None"),
    _runtime("get_rng_state_all", "TP311", _MOD + "get_rng_state_all", "[]"),
    _runtime("set_rng_state_all", "TP311", _MOD + "set_rng_state_all", "None"),
    Row(
        ("torch.random.fork_rng",),
        "TP312",
        "cuda_runtime",
        shape="fork_rng",
        trigger="fork_rng",
    ),
    *(
        Row((f"torch.cuda.{name}Tensor",), "TP313", "tensor_types", shape="tensor")
        for name in TENSOR_TYPES
    ),
    # A statement of its own: kept for CUDA behind `if DEVICE.type == "cuda":`, with
    # `set_default_dtype` and `set_default_device(DEVICE)` (torch 2.0) elsewhere.
    Row(
        ("torch.set_default_tensor_type(torch.cuda.<T>Tensor)",),
        "TP313",
        "tensor_types",
        kind="form",
        shape="default_type",
    ),
    _runtime("get_device_name", "TP314", _MOD + "get_device_name", '"cpu"'),
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
        '`if DEVICE.type == "cuda":` or keep only the fields you need',
        "get_device_properties",
    ),
    *_no_portable_form(
        "no portable form before `torch.accelerator.random.initial_seed()` "
        "(torch >= 2.14, raises on the CPU)",
        "initial_seed",
    ),
    *_no_portable_form("CUDA initializes lazily; remove it or guard it", "init"),
    *_no_portable_form(
        'CUDA-only state; guard it with `DEVICE.type == "cuda"`', "is_initialized"
    ),
    # The same class since torch 2.5 (tests/test_signatures.py checks it).
    Row(
        ("torch.cuda.OutOfMemoryError",),
        "TP318",
        "cuda_runtime",
        "{torch}.OutOfMemoryError",
        shape="name",
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
        "device_of",
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

DEVICE_STRINGS: List[Row] = [
    Row(('torch.device("cuda")',), "TP101", "device_strings", "{device}", kind="form"),
    Row(
        ('"cuda" as a device argument',),
        "TP102",
        "device_strings",
        "{device}.type",
        kind="string",
    ),
    Row(
        ('"cuda" if torch.cuda.is_available() else "cpu"',),
        "TP103",
        "device_strings",
        "{device}.type",
        kind="form",
    ),
    Row(
        ('x == "cuda"',),
        "TP104",
        "device_strings",
        '{device}.type != "cpu"',
        kind="form",
    ),
    Row(
        ('device = "cuda"',), "TP105", "device_strings", "{device}.type", kind="string"
    ),
    Row(('"cuda"',), "TP109", "device_strings", kind="string"),
]

TENSOR_METHODS: List[Row] = [
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
]

# The amp pass's own table (codemod.passes.amp.MAPPINGS) says how each is rewritten.
AMP: List[Row] = [
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

DISTRIBUTED: List[Row] = [
    Row(
        ('"nccl" as a backend',),
        "TP501",
        "distributed",
        "{torch}.distributed.get_default_backend_for_device({device})",
        kind="string",
        trigger="nccl",
    ),
    Row(
        (
            "torch.distributed.is_nccl_available",
            "torch.distributed.distributed_c10d.is_nccl_available",
        ),
        "TP502",
        "distributed",
        trigger="nccl",
    ),
    Row(('backend == "nccl"',), "TP502", "distributed", kind="form", trigger="nccl"),
    Row(
        (
            "torch.distributed.Backend.NCCL",
            "torch.distributed.distributed_c10d.Backend.NCCL",
        ),
        "TP503",
        "distributed",
        trigger="NCCL",
    ),
    Row(('"nccl"',), "TP503", "distributed", kind="string", trigger="nccl"),
    Row(
        ("device_ids=", "output_device="),
        "TP504",
        "distributed",
        cpu="None",
        kind="keyword",
    ),
    Row(
        ("spawn(nprocs=torch.cuda.device_count())",),
        "TP505",
        "distributed",
        "max({count}, 1)",
        kind="form",
    ),
]

BACKEND_FLAGS: List[Row] = [
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


def _report(
    code: str, *names: str, kind="name", trigger="cuda", advice=""
) -> List[Row]:
    return [
        Row((n,), code, "report_only", kind=kind, trigger=trigger, advice=advice)
        for n in names
    ]


REPORTED: List[Row] = [
    *_report(
        "TP901",
        "torch.cuda.CUDAGraph",
        "torch.cuda.graph",
        "torch.cuda.make_graphed_callables",
        "torch.cuda.graph_pool_handle",
        "torch.cuda.is_current_stream_capturing",
    ),
    *_report("TP901", "torch.cuda.graphs", kind="module"),
    *_report("TP902", "torch.cuda.nvtx", kind="module"),
    Row(
        ("torch.cuda.nvtx.range",),
        "TP902",
        "report_only",
        "{torch}.profiler.record_function",
    ),
    *_report(
        "TP902",
        "torch.cuda.nvtx.range_push",
        "torch.cuda.nvtx.range_pop",
        advice=NVTX_PAIR,
    ),
    *_report(
        "TP902",
        "torch.cuda.nvtx.mark",
        advice="nvtx marks exist only in CUDA builds; wrap the region in "
        "`torch.profiler.record_function(name)` instead",
    ),
    # Called for their effect alone, they are kept for CUDA behind a guard.
    *_report(
        "TP911",
        "torch.cuda.set_per_process_memory_fraction",
        "torch.cuda.set_sync_debug_mode",
        "torch.cuda.ipc_collect",
        "torch.cuda.cudart",
        "torch.cuda.profiler.start",
        "torch.cuda.profiler.stop",
        "torch.cuda.memory._record_memory_history",
        "torch.cuda.memory._dump_snapshot",
        advice='CUDA-only, with no portable equivalent: keep it for `DEVICE.type == "cuda"`'
        " (torchport guards it where it is a statement of its own, outside a CUDA "
        "check)",
    ),
    *_report(
        "TP903",
        "torch.cuda.get_device_capability",
        "torch.cuda.get_arch_list",
    ),
    *_report(
        "TP903",
        "torch.cuda.is_bf16_supported",
        advice="`is_bf16_supported()` is CUDA's answer (False on "
        "the CPU, where autocast uses bf16); elsewhere `torch.bfloat16 in torch.accelerator"
        '.get_device_capability()["supported_dtypes"]` (torch 2.10) says "can allocate", '
        'not "fast"',
    ),
    *_report("TP903", "torch.cuda.get_device_properties(i).major", kind="form"),
    *_report("TP904", "torch.utils.cpp_extension.CUDAExtension"),
    # A file that builds .cu sources need not say "cuda" anywhere else.
    *_report(
        "TP904",
        "torch.utils.cpp_extension.load",
        "torch.utils.cpp_extension.load_inline",
        kind="form",
        trigger=r"\.cuh?\b",
    ),
    *_report("TP905", "CUDA_VISIBLE_DEVICES", kind="string", trigger="CUDA"),
    *_report("TP906", "pynvml", kind="module", trigger="pynvml"),
    *_report("TP907", "apex", kind="module", trigger="apex"),
    *_report(
        "TP908",
        "torch.profiler.ProfilerActivity.CUDA",
        "torch.autograd.profiler.ProfilerActivity.CUDA",
        "torch._C._profiler.ProfilerActivity.CUDA",
        trigger="CUDA",
    ),
    *_report("TP909", "reduce-overhead", kind="string", trigger="reduce-overhead"),
    *_report("TP909", "max-autotune", kind="string", trigger="max-autotune"),
    *_report("TP910", "if torch.cuda.is_available(): <CUDA-only code>", kind="form"),
    # Sites in forms no pass rewrites, reported so that none is silent.
    *_report(
        "TP908",
        "cuda_time_total",
        "self_cuda_time_total",
        "cuda_memory_usage",
        "self_cuda_memory_usage",
        kind="string",
        advice="the profiler's CUDA columns are empty on other devices; use the "
        '"device_" ones ("device_time_total", "self_device_memory_usage"), which every '
        "accelerator fills",
    ),
    *_report(
        "TP909",
        "cudagraphs",
        "triton.cudagraphs",
        kind="string",
        advice="CUDA graphs capture CUDA streams only; pass this only when "
        '`DEVICE.type == "cuda"`',
    ),
    *_report(
        "TP909",
        "torch._inductor.config.triton.cudagraphs",
        advice="inductor's CUDA graphs capture CUDA streams only; set it only when "
        '`DEVICE.type == "cuda"`',
    ),
    *_report(
        "TP904",
        "torch.utils.cpp_extension.CUDA_HOME",
        advice="`CUDA_HOME` is the CUDA toolkit's path (None without one); build or "
        "load CUDA sources only when it is set, with a fallback",
    ),
    *_report(
        "TP913",
        "torch.version.cuda",
        advice="`torch.version.cuda` is the CUDA release of this build (None on "
        'other builds); to ask for an accelerator use `DEVICE.type != "cpu"`',
    ),
    *_report(
        "TP913",
        "torch.Tensor.cuda",
        "torch.nn.Module.cuda",
        advice="`.cuda` passed as a function moves to CUDA only; pass "
        "`lambda t: t.to(DEVICE)` instead",
    ),
    *_report("TP913", "from torch.cuda import *", kind="form"),
    *_report("TP913", "except ImportError: from torch.cuda... import", kind="form"),
    *_report("TP913", "torch.cuda.<T>Tensor", kind="string"),
    *_report("TP912", "CUDA_LAUNCH_BLOCKING", kind="string", trigger="CUDA"),
    *_report("TP912", "PYTORCH_CUDA_ALLOC_CONF", kind="string", trigger="CUDA"),
    *_report("TP912", "CUBLAS_WORKSPACE_CONFIG", kind="string", trigger="CUBLAS"),
]

ROWS: Tuple[Row, ...] = tuple(
    RUNTIME
    + DEVICE_STRINGS
    + TENSOR_METHODS
    + AMP
    + DISTRIBUTED
    + BACKEND_FLAGS
    + REPORTED
)

# Libraries (and torch modules) that run only on NVIDIA GPUs: an
# `if torch.cuda.is_available():` around them is kept (TP910), never widened.
CUDA_ONLY_LIBRARIES = (
    "apex",
    "pynvml",
    "flash_attn",
    "bitsandbytes",
    "xformers",
    "transformer_engine",
    "triton",
    "cupy",
    "pycuda",
    "numba.cuda",
)
# torch modules and names that stay CUDA-only once rewritten (with the library list,
# what a kept guard protects). Names under them that torchport ports are not.
CUDA_ONLY_TORCH = (
    "torch.backends.cudnn",
    "torch.backends.cuda",
    "torch.cuda.nvtx",
    "torch.cuda.graphs",
    "torch.cuda.graph",
    "torch.cuda.CUDAGraph",
    "torch.cuda.make_graphed_callables",
    "torch.cuda.jiterator",
    "torch.cuda.comm",
    "torch.cuda.nccl",
    "torch.cuda.get_device_capability",
    "torch.cuda.get_arch_list",
    "torch.cuda.is_bf16_supported",
    "torch.utils.cpp_extension",
    "torch.version.cuda",
    "torch.profiler.ProfilerActivity.CUDA",
)
CUDA_ONLY = CUDA_ONLY_TORCH + CUDA_ONLY_LIBRARIES
# Under CUDA_ONLY, but torchport rewrites them to portable code, and harmless where
# they stay: a guard around them is not kept (a second run would then widen it).
PORTED = ("torch.backends.cuda.matmul.allow_tf32", "torch.backends.cuda.sdp_kernel")


# -- views for the passes -----------------------------------------------------------
def rows_of(owner: str) -> Iterator[Row]:
    return (r for r in ROWS if r.owner == owner)


def names_of(owner: str, kinds=("name",)) -> Dict[str, Row]:
    """Qualified name (and every alias) -> row, for the rows ``owner`` handles."""
    return {n: r for r in rows_of(owner) if r.kind in kinds for n in r.names}


def codes_of(owner: str, kinds=("name", "module")) -> Dict[str, str]:
    """Qualified name -> rule code, for ``owner``'s names and modules."""
    return {n: r.code for n, r in names_of(owner, kinds).items()}


def trigger_of(owner: str) -> "re.Pattern[str]":
    """What a line (or file) must match to hold one of ``owner``'s sites."""
    words = dict.fromkeys(r.trigger for r in rows_of(owner))
    return re.compile("|".join(words))


def prefilter() -> "Prefilter":
    """Every pass's trigger, as bytes: a file matching none is not parsed."""
    return Prefilter(dict.fromkeys(r.trigger for r in ROWS))


class Prefilter:
    """Whether bytes match any of the triggers, as ``re`` says, found faster.

    ``re`` tries each alternative of a pattern at each position; ``bytes in`` finds
    one word at memchr speed. Each trigger is searched for by the word every match
    of it contains; only a trigger that is more than its word (``\\bamp\\b``) runs
    its pattern, and only where its word occurs.
    """

    def __init__(self, triggers) -> None:
        self.pattern = re.compile("|".join(triggers).encode())  # the plain way
        words, checked = [], []
        for trigger in triggers:
            word, exact = _required_word(trigger)
            if exact:
                words.append(word.encode())
            else:
                checked.append((word.encode(), re.compile(trigger.encode())))
        # A trigger whose word holds a plain trigger's word adds nothing.
        self.words = tuple(
            w for w in words if not any(o != w and o in w for o in words)
        )
        self.checked = tuple(
            (word, pattern)
            for word, pattern in checked
            if not any(plain in word for plain in self.words)
        )

    def matches(self, data: bytes) -> bool:
        for word in self.words:
            if word in data:
                return True
        for word, pattern in self.checked:
            if word in data and pattern.search(data):
                return True
        return False


def _required_word(trigger: str) -> Tuple[str, bool]:
    """The longest run of characters every match of ``trigger`` contains, and whether
    the trigger is just that run. Triggers are words with escaped punctuation, ``\\b``
    and ``?``; anything else is refused, so that the run is never wrong."""
    runs: List[str] = [""]
    exact = True
    index = 0
    while index < len(trigger):
        char = trigger[index]
        if char == "\\" and index + 1 < len(trigger):
            following = trigger[index + 1]
            index += 2
            if not following.isalnum():
                runs[-1] += following  # an escaped punctuation mark
            elif following == "b":  # a word boundary: no character of its own
                exact = False
                runs.append("")
            else:
                raise ValueError(f"trigger {trigger!r}: escape \\{following}")
            continue
        if char == "?":  # the character before is optional
            exact = False
            runs[-1] = runs[-1][:-1]
            runs.append("")
        elif char in ".^$*+{}[]()|\\":
            raise ValueError(f"trigger {trigger!r}: {char!r} is not understood here")
        else:
            runs[-1] += char
        index += 1
    word = max(runs, key=len)
    if not word:
        raise ValueError(f"trigger {trigger!r} holds no word")
    return word, exact


def torch_cuda_elsewhere() -> Tuple[str, ...]:
    """``torch.cuda`` names and modules another pass than the runtime pass owns."""
    return tuple(
        sorted(
            n
            for r in ROWS
            if r.owner != "cuda_runtime" and r.kind in ("name", "module")
            for n in r.names
            if n.startswith("torch.cuda.")
        )
    )


def under(name: Optional[str], prefixes) -> Optional[str]:
    """The entry of ``prefixes`` that ``name`` is, or is below (at a dot)."""
    if not name:
        return None
    for prefix in prefixes:
        if name == prefix or name.startswith(prefix + "."):
            return prefix
    return None
