"""What the catalogue says of each name of torch's own device API that has a
``torch.cuda`` counterpart: ``torch.accelerator``'s functions, ``torch.Stream`` and
``torch.Event`` and their methods, and the members every in-tree device module has.

A name is *mapped* when a catalogue row rewrites its ``torch.cuda`` counterpart to it
(tests/test_accelerator_coverage.py looks for the row); otherwise ``NOT_MAPPED`` says
why, checked against the wheels of each torch release (/work/wheels in development)
and the installed torch. Pure data.
"""

from __future__ import annotations

from typing import Dict, Tuple

# torch.accelerator name -> its torch.cuda counterparts, where the name differs (the
# others are ``torch.cuda.<same name>``; an empty tuple: none).
COUNTERPARTS: Dict[str, Tuple[str, ...]] = {
    "current_accelerator": (),
    "current_device_index": ("torch.cuda.current_device",),
    "current_device_idx": ("torch.cuda.current_device",),
    "set_device_index": ("torch.cuda.set_device",),
    "set_device_idx": ("torch.cuda.set_device",),
    "device_index": ("torch.cuda.device",),
    "get_memory_info": ("torch.cuda.mem_get_info",),
    "Graph": ("torch.cuda.CUDAGraph", "torch.cuda.graph"),
    "empty_host_cache": (),
}

# Names of torch's device API the catalogue maps nothing to, and why.
NOT_MAPPED: Dict[str, str] = {
    "torch.accelerator.current_accelerator": "no torch.cuda counterpart; the device "
    "binding _DEVICE() is made of it",
    "torch.accelerator.empty_host_cache": "no torch.cuda counterpart (torch >= 2.12; "
    "torch.cuda has no empty_host_cache)",
    "torch.accelerator.current_device_idx": "deprecated alias of "
    "current_device_index, which TP302 writes",
    "torch.accelerator.set_device_idx": "deprecated alias of set_device_index, which "
    "TP302 writes",
    "torch.accelerator.get_device_capability": "torch >= 2.10; it returns "
    '{"supported_dtypes": ...}, not the (major, minor) compute capability code reads '
    "from torch.cuda.get_device_capability(): that stays reported (TP903)",
    "torch.accelerator.Graph": "torch >= 2.12; torch.cuda.graph(g) captures on a side "
    "stream of its own after synchronizing and emptying the cache, and CUDAGraph "
    "replays on CUDA streams: CUDA graphs stay reported (TP901)",
    # get_memory_info(i)[1] is not get_device_properties(i).total_memory on CUDA:
    # cudaMemGetInfo makes a context on device i (hundreds of MiB), properties do not.
    "torch.accelerator.get_memory_info[1]": "not torch.cuda.get_device_properties(i)"
    ".total_memory: asking the free memory makes a CUDA context on device i, which "
    "reading its properties does not; get_device_properties stays reported (TP390)",
    # Methods of torch.Stream and torch.Event that torchport writes no row for: the
    # object it writes has them as torch.cuda's has, and so does torch.cpu's
    # stand-in on the CPU.
    **{
        f"torch.Stream.{name}": "called on the torch.Stream torchport writes as on "
        "the torch.cuda.Stream it was; torch.cpu.Stream has it too"
        for name in ("wait_event", "wait_stream", "record_event")
    },
    **{
        f"torch.Event.{name}": "called on the torch.Event torchport writes as on the "
        "torch.cuda.Event it was; torch.cpu.Event has it too"
        for name in ("query", "record", "synchronize", "wait")
    },
    "torch.Event.ipc_handle": "interprocess events are reported (TP306: torch.Event "
    "does not honour interprocess=True)",
    "torch.Event.from_ipc_handle": "interprocess events are reported (TP306: torch."
    "Event does not honour interprocess=True)",
}

# torch.cuda queries that decide a code path, for which no accelerator API gives
# CUDA's answer, and what torchport writes instead (codemod.catalog.queries; checked
# on torch 2.6-2.13 and on tpsim).
NO_EXACT_FORM: Dict[str, str] = {
    "torch.cuda.get_device_capability": "an NVIDIA SM version; torch.accelerator's "
    "get_device_capability (torch >= 2.10) returns the supported dtypes and raises on "
    'CUDA. A comparison of it becomes `_DEVICE().type == "cuda" and <comparison>` '
    "(TP316, safe): CUDA's answer, read as before, and False where reading it raised",
    "torch.cuda.get_device_properties(i).major": "the same SM version, read from the "
    "properties: compared, as get_device_capability (TP316)",
    "torch.cuda.is_bf16_supported": "answers False without raising off CUDA, so any "
    "other answer there changes a path the original took; no accelerator API says "
    'whether bfloat16 is fast (get_device_capability()["supported_dtypes"] says it '
    'can be allocated). CUDA\'s check is kept behind `_DEVICE().type == "cuda"`, and '
    "elsewhere the accelerator's autocast dtype answers (`torch.get_autocast_dtype("
    "_DEVICE().type) == torch.bfloat16`, torch >= 2.4; False on the CPU as before): "
    "an unsafe fix (TP317)",
    "torch.cuda.get_device_name": "no accelerator API names a device; kept for CUDA "
    "and the device type elsewhere: safe where the name only goes into text (TP315), "
    "unsafe where it is a value (TP314)",
}
