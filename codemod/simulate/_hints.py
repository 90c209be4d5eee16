"""The excepthook of simulated runs: after the usual traceback, one line
``path:line: ExcType: message`` for the innermost frame of the user's code
(not torch, the standard library, site-packages or the simulator), and a
``hint: ...`` line when the error is one a port typically makes."""

from __future__ import annotations

import os
import re
import site
import sys
import sysconfig
import traceback

NAME = "tpsim"

# torch.<vendor>.X -> the portable spelling.
_PORTABLE = {
    "synchronize": "torch.accelerator.synchronize()",
    "current_stream": "torch.accelerator.current_stream()",
    "default_stream": "torch.accelerator.current_stream() (no portable default stream)",
    "set_stream": "torch.accelerator.set_stream(stream)",
    "stream": "`with stream:` or torch.accelerator.set_stream(stream)",
    "Stream": "torch.Stream(DEVICE)",
    "Event": "torch.Event(DEVICE)",
    "current_device": "torch.accelerator.current_device_index()",
    "set_device": "torch.accelerator.set_device_index(index)",
    "device_count": "torch.accelerator.device_count()",
    "is_available": "torch.accelerator.is_available()",
    "manual_seed": "torch.manual_seed(seed)",
    "memory_allocated": "torch.accelerator.memory_allocated()",
    "max_memory_allocated": "torch.accelerator.max_memory_allocated()",
    "memory_reserved": "torch.accelerator.memory_reserved()",
    "max_memory_reserved": "torch.accelerator.max_memory_reserved()",
    "memory_stats": "torch.accelerator.memory_stats()",
    "reset_peak_memory_stats": "torch.accelerator.reset_peak_memory_stats()",
    "empty_cache": "torch.accelerator.empty_cache()",
    "mem_get_info": "torch.accelerator.get_memory_info()",
    "amp": "torch.amp (torch.autocast(DEVICE.type), torch.amp.GradScaler(DEVICE.type))",
}

_CUDA_ONLY = (
    "Torch not compiled with CUDA enabled",
    "No CUDA GPUs are available",
    "Found no NVIDIA driver",
    "CUDA driver initialization failed",
    "Attempting to deserialize object on a CUDA device",
)


def _library_dirs() -> list[str]:
    dirs = {
        sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")
    }
    dirs.update(site.getsitepackages() if hasattr(site, "getsitepackages") else [])
    dirs.add(site.getusersitepackages())
    dirs.add(os.path.dirname(__file__))
    if "torch" in sys.modules and getattr(sys.modules["torch"], "__file__", None):
        dirs.add(os.path.dirname(sys.modules["torch"].__file__))
    return [os.path.realpath(d) + os.sep for d in dirs if d]


def is_user_file(filename: str, library_dirs: list[str]) -> bool:
    if filename.startswith("<"):
        return filename in ("<string>", "<stdin>")
    path = os.path.realpath(filename)
    return not any(path.startswith(d) for d in library_dirs)


def hint(message: str, source: str = "", in_library: bool = False) -> str | None:
    """A one-line hint for errors a port typically makes, else None;
    ``in_library``: the error was raised inside torch, not by the user's line."""
    if "Expected all tensors to be on the same device" in message:
        devices = re.findall(r"\b(cpu|%s(?::\d+)?)\b" % NAME, message)
        if "cpu" in devices:
            return (
                f"a CPU tensor met a {NAME} tensor: a `.to(DEVICE)` is missing "
                "for one of the operands"
            )
        return (
            f"tensors on two {NAME} devices met: keep each process's tensors on "
            "its own device (as on a multi-GPU machine)"
        )
    missing = re.search(r"module 'torch\.%s' has no attribute '(\w+)'" % NAME, message)
    if missing:
        name = missing.group(1)
        if in_library:
            return (
                f"torch itself asked for torch.{NAME}.{name}, which the simulator "
                "leaves out on purpose (its module offers only what "
                "torch.accelerator does): this API may fail on a new accelerator"
            )
        portable = _PORTABLE.get(name)
        if portable:
            return f"use {portable}: a new accelerator's module need not have .{name}"
        return (
            f"torch.{NAME} offers only what torch.accelerator offers: use "
            "torch.accelerator, torch.Stream or torch.Event instead"
        )
    if "tpsim stream check:" in message:
        return (
            "a stream's results were used without waiting for it: make the "
            "stream that uses them wait first (current.wait_stream(side)), as "
            "CUDA requires"
        )
    if "No backend type associated with device type cpu" in message:
        return (
            f"a CPU tensor went into a collective of the {NAME} group (tpccl, as "
            "NCCL, serves device tensors only): move it with .to(DEVICE)"
        )
    if "device type for generator but found 'cpu'" in message:
        return "create the generator on the device: torch.Generator(device=DEVICE)"
    if "has no attribute '_scatter'" in message or "_broadcast_coalesced" in message:
        return "nn.DataParallel is CUDA-only: use DistributedDataParallel"
    if "deserialize object on a CUDA device" in message:
        return "pass map_location=DEVICE to torch.load"
    if any(text in message for text in _CUDA_ONLY) or "torch.cuda" in source:
        call = f" `{source.strip()}`" if source.strip() else ""
        return (
            f"this call is CUDA-only{call}: use DEVICE "
            "(torch.accelerator.current_accelerator()) or torch.accelerator"
        )
    return None


def _spawned(message: str) -> tuple[list[tuple[str, int, str]], str] | None:
    """Frames and final line of a child's traceback carried in the message of
    torch.multiprocessing's ProcessRaisedException."""
    frames = re.findall(r'File "([^"]+)", line (\d+)[^\n]*\n(?: {4}(.*))?', message)
    lines = [line for line in message.strip().splitlines() if line.strip()]
    if not frames or not lines:
        return None
    return [(f, int(n), src) for f, n, src in frames], lines[-1].strip()


def report(exc_type, exc, tb) -> list[str]:
    """The extra lines for an uncaught exception (possibly none)."""
    libs = _library_dirs()
    frames = [(f.filename, f.lineno, f.line or "") for f in traceback.extract_tb(tb)]
    message = str(exc)
    first = next((line for line in message.splitlines() if line.strip()), "")
    text = f"{exc_type.__name__}: {first}"
    if exc_type.__name__ == "ProcessRaisedException":
        spawned = _spawned(message)
        if spawned:
            frames, text = spawned
            message = text
    user = [f for f in frames if is_user_file(f[0], libs)]
    if not user:
        return []
    filename, lineno, source = user[-1]
    lines = [f"{filename}:{lineno}: {text}"]
    advice = hint(message, source, in_library=user[-1] != frames[-1])
    if advice:
        lines.append(f"hint: {advice}")
    return lines


_previous = sys.__excepthook__


def _excepthook(exc_type, exc, tb):
    _previous(exc_type, exc, tb)
    if issubclass(exc_type, KeyboardInterrupt):
        return
    try:
        lines = report(exc_type, exc, tb)
    except Exception:  # never hide the real error behind ours
        return
    for line in lines:
        print(line, file=sys.stderr)


def install() -> None:
    global _previous
    if sys.excepthook is not _excepthook:
        _previous, sys.excepthook = sys.excepthook, _excepthook
