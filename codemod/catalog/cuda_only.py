"""CUDA-only code with no portable form: reported, or kept for CUDA behind a guard;
and the libraries and torch modules that run only on NVIDIA GPUs."""

from __future__ import annotations

from typing import List

from codemod.catalog.rows import Row
from codemod.catalog.runtime import NVTX_PAIR


def _report(
    code: str, *names: str, kind="name", trigger="cuda", advice=""
) -> List[Row]:
    return [
        Row((n,), code, "cuda_only", kind=kind, trigger=trigger, advice=advice)
        for n in names
    ]


ROWS: List[Row] = [
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
        "cuda_only",
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
        advice='CUDA-only, with no portable equivalent: keep it for `_DEVICE().type == "cuda"`'
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
        '`_DEVICE().type == "cuda"`',
    ),
    *_report(
        "TP909",
        "torch._inductor.config.triton.cudagraphs",
        advice="inductor's CUDA graphs capture CUDA streams only; set it only when "
        '`_DEVICE().type == "cuda"`',
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
        'other builds); to ask for an accelerator use `_DEVICE().type != "cpu"`',
    ),
    *_report(
        "TP913",
        "torch.Tensor.cuda",
        "torch.nn.Module.cuda",
        advice="`.cuda` passed as a function moves to CUDA only; pass "
        "`lambda t: t.to(_DEVICE())` instead",
    ),
    *_report("TP913", "from torch.cuda import *", kind="form"),
    *_report("TP913", "except ImportError: from torch.cuda... import", kind="form"),
    *_report("TP913", "torch.cuda.<T>Tensor", kind="string"),
    *_report("TP912", "CUDA_LAUNCH_BLOCKING", kind="string", trigger="CUDA"),
    *_report("TP912", "PYTORCH_CUDA_ALLOC_CONF", kind="string", trigger="CUDA"),
    *_report("TP912", "CUBLAS_WORKSPACE_CONFIG", kind="string", trigger="CUBLAS"),
    *_report("TP912", "CUDA_MODULE_LOADING", "CUDA_DEVICE_ORDER", kind="string"),
    *_report("TP912", "NCCL_...", "TORCH_NCCL_...", kind="form", trigger="NCCL_"),
    *_report("TP914", "mock.patch of torch.cuda", kind="form"),
]

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
