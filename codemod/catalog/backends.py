"""Which backends implement each portable idiom torchport writes, and where that shows.

For every form the passes emit (a function of the device module reached through
``torch.get_device_module(_DEVICE())``, a ``torch.accelerator`` function, an AMP or
distributed entry point), ``IDIOMS`` says for CUDA, the CPU, MPS, XPU, TorchTPU and
TorchNeuron whether the backend implements it, with the evidence: a file of the backend's
own distribution (``torch/...`` for the backends built into PyTorch, read from torch 2.13;
``torch_tpu/...`` from the ``torch-tpu`` 0.2.0 wheel) and the symbol defined there. A
``no`` names the file where the symbol would be and is not. ``unknown`` means the source
at hand cannot settle it (compiled code, or no source at all, as for TorchNeuron).

"Implements" is about the backend, not about torchport's guards: the CPU has no
``manual_seed_all`` and torchport writes that call behind ``_DEVICE().type != "cpu"``.

Pure data. ``tests/test_backends.py`` checks every PyTorch row against the installed
torch, ``scripts/torchtpu_check.py`` checks the TorchTPU rows against the installed wheel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping

BACKENDS = ("cuda", "cpu", "mps", "xpu", "tpu", "neuron")
BACKEND_NAMES = {
    "cuda": "CUDA",
    "cpu": "CPU",
    "mps": "MPS",
    "xpu": "XPU",
    "tpu": "TorchTPU",
    "neuron": "TorchNeuron",
}
YES, NO, UNKNOWN = "yes", "no", "unknown"


@dataclass(frozen=True)
class Evidence:
    status: str  # YES, NO or UNKNOWN
    path: str = ""  # file inside the backend's distribution
    symbol: str = ""  # defined there (YES) or absent there (NO); dotted for members
    note: str = ""
    refusal: bool = False  # NO shown by an error message present at path instead


def shown_by_presence(evidence: Evidence) -> bool:
    """Whether the symbol is found at the path (YES, or NO by refusal)."""
    return evidence.status == YES or evidence.refusal


def _yes(path: str, symbol: str, note: str = "") -> Evidence:
    return Evidence(YES, path, symbol, note)


def _no(path: str, symbol: str, note: str = "") -> Evidence:
    return Evidence(NO, path, symbol, note)


def _unknown(note: str, path: str = "", symbol: str = "") -> Evidence:
    return Evidence(UNKNOWN, path, symbol, note)


def _tpu(name: str, note: str = "") -> Evidence:
    return _yes(TPU_API, f'"{name}": _tpu_attr("{name}")', note)


def _tpu_lacks(name: str) -> Evidence:
    return _no(TPU_API, f'"{name}":', "not among torch.tpu's exports")


NEURON = _unknown("no TorchNeuron source was available to check")

CUDA_INIT = "torch/cuda/__init__.py"
CUDA_RANDOM = "torch/cuda/random.py"
CPU_INIT = "torch/cpu/__init__.py"
MPS_INIT = "torch/mps/__init__.py"
XPU_INIT = "torch/xpu/__init__.py"
XPU_RANDOM = "torch/xpu/random.py"
TPU_MODULE = "torch_tpu/_internal/device/_device_module.py"
# The table of what torch.tpu exports (the rest of the device class stays private).
TPU_API = "torch_tpu/_internal/public_api.py"
TPU_EXPERIMENTAL = "marked experimental: warns on use"
# Kernels declared per dispatch key (the generated ATen headers of this CPU build).
AMP_KERNELS = (
    "torch/include/ATen/ops/_amp_foreach_non_finite_check_and_unscale_native.h"
)
RECORD_STREAM_KERNELS = "torch/include/ATen/ops/record_stream_native.h"
NO_MPS_HEADERS = "a Linux build of torch declares no MPS kernels in its headers"
XPU_KERNELS = "XPU kernels live outside torch (torch-xpu-ops)"

# Device allocators: torch.accelerator's memory functions reach the accelerator's
# c10::DeviceAllocator; the CPU has none.
CUDA_ALLOCATOR = _yes(
    "torch/include/c10/cuda/CUDACachingAllocator.h",
    "class CUDAAllocator : public DeviceAllocator",
)
XPU_ALLOCATOR = _yes(
    "torch/include/c10/xpu/XPUCachingAllocator.h",
    "class XPUAllocator : public DeviceAllocator",
)
MPS_ALLOCATOR = _yes("torch/include/ATen/mps/MPSAllocator.h", "getDeviceStats")
CPU_NO_ALLOCATOR = Evidence(
    NO,
    "torch/include/c10/core/CachingDeviceAllocator.h",
    "getDeviceAllocator is not supported for CPU device type.",
    "torch.accelerator's memory functions raise on a machine without an accelerator",
    refusal=True,
)
TPU_ALLOCATOR = _unknown(
    "torch.tpu defines no allocator statistics; the compiled glue "
    "(torch_tpu/csrc/common/glue_*/libpywrap_*_common.so) mentions DeviceAllocator and "
    "getDeviceStats, so whether torch.accelerator's statistics work needs a TPU",
    TPU_API,
    '"memory_allocated":',
)


def _device_module(
    cuda: Evidence,
    cpu: Evidence,
    mps: Evidence,
    xpu: Evidence,
    tpu: Evidence,
) -> Dict[str, Evidence]:
    return {
        "cuda": cuda,
        "cpu": cpu,
        "mps": mps,
        "xpu": xpu,
        "tpu": tpu,
        "neuron": NEURON,
    }


def _allocator(mps: Evidence = MPS_ALLOCATOR) -> Dict[str, Evidence]:
    return _device_module(
        CUDA_ALLOCATOR, CPU_NO_ALLOCATOR, mps, XPU_ALLOCATOR, TPU_ALLOCATOR
    )


def _rng(name: str, cpu: Evidence, mps: Evidence, tpu: Evidence) -> Dict[str, Evidence]:
    return _device_module(
        _yes(CUDA_RANDOM, name), cpu, mps, _yes(XPU_RANDOM, name), tpu
    )


DEVICE_MODULE = "torch.get_device_module(_DEVICE())"
OOM_RAISED = (
    "the class is in every build; whether this backend's allocator raises it (rather "
    "than a plain RuntimeError) is compiled code"
)

IDIOMS: Mapping[str, Mapping[str, Evidence]] = {
    f"{DEVICE_MODULE}.manual_seed_all(seed)": _rng(
        "manual_seed_all",
        _no(CPU_INIT, "manual_seed_all"),
        _no(MPS_INIT, "manual_seed_all", "torch.mps has manual_seed only"),
        _tpu("manual_seed_all"),
    ),
    f"{DEVICE_MODULE}.initial_seed()": _rng(
        "initial_seed",
        _no(CPU_INIT, "initial_seed"),
        _no(MPS_INIT, "initial_seed"),
        _tpu("initial_seed"),
    ),
    f"{DEVICE_MODULE}.get_rng_state()": _rng(
        "get_rng_state",
        _no(CPU_INIT, "get_rng_state"),
        _yes(MPS_INIT, "get_rng_state"),
        _tpu("get_rng_state"),
    ),
    f"{DEVICE_MODULE}.set_rng_state(state)": _rng(
        "set_rng_state",
        _no(CPU_INIT, "set_rng_state"),
        _yes(MPS_INIT, "set_rng_state"),
        _tpu("set_rng_state"),
    ),
    "torch.accelerator.empty_cache()": _allocator(),
    "torch.accelerator.memory_allocated()": _allocator(),
    "torch.accelerator.max_memory_allocated()": _allocator(),
    "torch.accelerator.memory_reserved()": _allocator(),
    "torch.accelerator.max_memory_reserved()": _allocator(),
    "torch.accelerator.memory_stats()": _allocator(),
    "torch.accelerator.reset_peak_memory_stats()": _allocator(),
    "torch.accelerator.reset_accumulated_memory_stats()": _allocator(),
    "torch.accelerator.get_memory_info()": _device_module(
        _yes("torch/include/c10/cuda/CUDACachingAllocator.h", "getMemoryInfo"),
        CPU_NO_ALLOCATOR,
        _no(
            "torch/include/ATen/mps/MPSAllocator.h",
            "getMemoryInfo",
            "the DeviceAllocator default raises 'not implemented'",
        ),
        _unknown(
            "not overridden in torch/include/c10/xpu/XPUCachingAllocator.h; the "
            "compiled allocator may",
            "torch/include/c10/xpu/XPUCachingAllocator.h",
        ),
        TPU_ALLOCATOR,
    ),
    "torch.amp.GradScaler(_DEVICE().type)": _device_module(
        _yes(AMP_KERNELS, "_amp_foreach_non_finite_check_and_unscale_cuda_"),
        _yes(AMP_KERNELS, "_amp_foreach_non_finite_check_and_unscale_cpu_"),
        _unknown(NO_MPS_HEADERS),
        _unknown(XPU_KERNELS),
        _unknown(
            "no library of the wheel names _amp_foreach_non_finite_check_and_unscale_"
            " or _amp_update_scale_; a fallback may still run them"
        ),
    ),
    "torch.autocast(_DEVICE().type)": _device_module(
        _yes("torch/amp/autocast_mode.py", "is_autocast_available"),
        _yes("torch/amp/autocast_mode.py", "is_autocast_available"),
        _yes("torch/amp/autocast_mode.py", "is_autocast_available"),
        _yes("torch/amp/autocast_mode.py", "is_autocast_available"),
        _tpu(
            "get_amp_supported_dtype",
            "what torch.autocast asks a PrivateUse1 backend for",
        ),
    ),
    "torch.distributed.get_default_backend_for_device(_DEVICE())": _device_module(
        _yes("torch/distributed/distributed_c10d.py", '"cuda": NCCL'),
        _yes("torch/distributed/distributed_c10d.py", '"cpu": GLOO'),
        _yes("torch/distributed/distributed_c10d.py", '"mps": GLOO'),
        _yes("torch/distributed/distributed_c10d.py", '"xpu": XCCL'),
        _yes(
            "torch_tpu/_internal/distributed/torchcomm_tpu.py",
            'default_device_backend_map["tpu"] = "tpu_dist"',
        ),
    ),
    # One class for every backend; which allocators raise it is compiled code.
    "torch.OutOfMemoryError": _device_module(
        _yes(CUDA_INIT, "OutOfMemoryError = torch._C.OutOfMemoryError"),
        _unknown(OOM_RAISED, "torch/_C/__init__.pyi", "class OutOfMemoryError"),
        _unknown(OOM_RAISED, "torch/_C/__init__.pyi", "class OutOfMemoryError"),
        _unknown(OOM_RAISED, "torch/_C/__init__.pyi", "class OutOfMemoryError"),
        _unknown("the class is torch's own; whether TorchTPU raises it needs a TPU"),
    ),
    "x.record_stream(stream)": _device_module(
        _yes(RECORD_STREAM_KERNELS, "record_stream_cuda"),
        _no(
            RECORD_STREAM_KERNELS,
            "record_stream_cpu",
            "raises 'unknown parameter type' for a torch.cpu.Stream",
        ),
        _unknown(NO_MPS_HEADERS),
        _unknown(XPU_KERNELS),
        _unknown("the compiled glue mentions recordStream; the Python source does not"),
    ),
}


# torch.accelerator functions every accelerator backend serves through torch's own
# accelerator hooks: they are the contract, not one vendor's module, and need no row
# per backend. On a machine without an accelerator the first three answer (None,
# False, 0) and the others raise; torchport writes those behind a CPU guard
# (tests/test_signatures.py).
ACCELERATOR_CONTRACT = (
    "current_accelerator",
    "is_available",
    "device_count",
    "current_device_index",
    "set_device_index",
    "device_index",
    "current_stream",
    "set_stream",
    "synchronize",
)
# Likewise torch's own stream and event classes, served by every backend's device
# guard (c10::impl::DeviceGuardImplInterface): torchport writes them behind the CPU
# guard, torch.cpu's no-op stand-ins on the CPU.
TORCH_CONTRACT = ("Stream", "Event")


def backends_of(idiom: str) -> Mapping[str, Evidence]:
    """The evidence row of one emitted idiom (KeyError when torchport does not emit it)."""
    return IDIOMS[idiom]


def render_table(idioms=None) -> str:
    """A Markdown table: one row per idiom, one column per backend."""
    names = list(idioms if idioms is not None else IDIOMS)
    header = "| idiom | " + " | ".join(BACKEND_NAMES[b] for b in BACKENDS) + " |"
    lines = [header, "|---" * (len(BACKENDS) + 1) + "|"]
    for name in names:
        cells = [IDIOMS[name][backend].status for backend in BACKENDS]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _callee(idiom: str) -> str:
    """``torch.accelerator.empty_cache()`` -> ``torch.accelerator.empty_cache``."""
    text = idiom[len("with ") :] if idiom.startswith("with ") else idiom
    name = text.split("(", 1)[0]
    if name == "torch.get_device_module":  # (_DEVICE()).synchronize() -> the method
        return "." + text.rpartition(").")[2].split("(", 1)[0]
    return name


def idioms_in(text: str):
    """The idioms a rule's documentation writes (its example's result, its prose)."""
    return [idiom for idiom in IDIOMS if _written(_callee(idiom) + "(", text)]


def _written(callee: str, text: str) -> bool:
    """A device module's member (``.get_rng_state(``) is not torch's own function
    of that name (``torch.get_rng_state(``)."""
    if not callee.startswith("."):
        return callee in text
    return any(not text[:at].endswith("torch") for at in _starts(callee, text))


def _starts(part: str, text: str):
    at = text.find(part)
    while at != -1:
        yield at
        at = text.find(part, at + 1)
