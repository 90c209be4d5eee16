"""``torch.tpsim``: the device module, holding what TorchTPU's ``torch.tpu`` holds.

A real vendor module (``torch.cuda``) offers far more than ``torch.accelerator``
does; code that leans on the rest (``torch.get_device_module(dev).empty_cache()``,
``.memory_allocated()``, ``.is_bf16_supported()``) is not portable. This module
offers what torch itself looks up on a PrivateUse1 backend's module and what
TorchTPU's module has besides, so code that runs there runs here, and the rest
fails with AttributeError, as it would on such a backend:

- what torch asks of a backend's module: ``is_available`` and ``device_count``
  (``torch.accelerator``, DataLoader, serialization), ``_is_in_bad_fork`` and
  ``manual_seed_all`` (``torch.manual_seed``), ``get_rng_state``,
  ``set_rng_state`` and ``device`` (``torch.utils.checkpoint``, ``fork_rng``,
  ``torch.load``), ``get_amp_supported_dtype`` (``torch.autocast``),
  ``is_initialized`` and ``set_device`` (``init_device_mesh``);
- what ``torch.tpu`` has too: ``current_device``, ``synchronize``,
  ``manual_seed``, ``Stream``, ``Event``, ``stream``, ``current_stream``,
  ``set_stream``, ``default_stream``, ``get_device_name``,
  ``get_device_properties``, ``_lazy_init``.

It has no allocator statistics, ``empty_cache``, ``mem_get_info``,
``is_bf16_supported`` or ``get_device_capability``: TorchTPU has none of them.
"""

from __future__ import annotations

import dataclasses
import os
import types

import torch

NAME = "tpsim"
AUTOCAST_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}


def _index(device) -> int:
    if device is None:
        return torch.accelerator.current_device_index()
    if isinstance(device, int):
        return device
    device = torch.device(device)
    if device.type != NAME:
        raise ValueError(f"expected a {NAME} device, got {device}")
    return (
        torch.accelerator.current_device_index()
        if device.index is None
        else device.index
    )


def is_available() -> bool:
    return device_count() > 0


def device_count() -> int:
    return torch.ops.tpsim.device_count()


def current_device() -> int:
    return torch.accelerator.current_device_index()


def _is_in_bad_fork() -> bool:
    # Device memory is host memory: a forked child can keep using it.
    return False


def _lazy_init() -> None:
    """Nothing to start: the backend is ready once loaded."""


def manual_seed(seed: int) -> None:
    """Seeds the current device's generator only, as torch.cuda.manual_seed."""
    torch.ops.tpsim.manual_seed(int(seed), current_device())


def manual_seed_all(seed: int) -> None:
    torch.ops.tpsim.manual_seed_all(int(seed))


def get_rng_state(device="tpsim") -> torch.Tensor:
    return torch.ops.tpsim.get_rng_state(_index(device))


def set_rng_state(new_state: torch.Tensor, device="tpsim") -> None:
    torch.ops.tpsim.set_rng_state(new_state, _index(device))


class device:
    """Context manager making ``device`` the current device index."""

    def __init__(self, device):
        self.idx = None if device is None else _index(device)
        self._guard = torch.accelerator.device_index(self.idx)

    def __enter__(self):
        self._guard.__enter__()

    def __exit__(self, *exc_info):
        self._guard.__exit__(*exc_info)


def is_initialized() -> bool:
    # Host memory needs no lazy start-up: the backend is ready once loaded.
    return True


def set_device(device) -> None:
    torch.accelerator.set_device_index(_index(device))


def synchronize(device=None) -> None:
    torch.accelerator.synchronize(None if device is None else _index(device))


def Stream(device=None, priority: int = 0) -> torch.Stream:
    return torch.Stream(torch.device(NAME, _index(device)), priority=priority)


def Event(
    enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
) -> torch.Event:
    return torch.Event(
        torch.device(NAME, current_device()),
        enable_timing=enable_timing,
        blocking=blocking,
        interprocess=interprocess,
    )


def current_stream(device=None) -> torch.Stream:
    return torch.accelerator.current_stream(_index(device))


def default_stream(device=None) -> torch.Stream:
    index = _index(device)
    current = torch.accelerator.current_stream(index)
    return torch.Stream(
        stream_id=0, device_index=index, device_type=current.device_type
    )


def set_stream(stream: torch.Stream) -> None:
    torch.accelerator.set_stream(stream)


class stream:
    """Context manager making ``stream`` current (``None``: no change)."""

    def __init__(self, stream: torch.Stream | None):
        self.stream = stream
        self._previous: torch.Stream | None = None

    def __enter__(self):
        if self.stream is not None:
            self._previous = torch.accelerator.current_stream(self.stream.device.index)
            torch.accelerator.set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc_info):
        if self._previous is not None:
            torch.accelerator.set_stream(self._previous)


@dataclasses.dataclass(frozen=True)
class DeviceProperties:
    name: str
    total_memory: int
    multi_processor_count: int = 1


def get_device_name(device=None) -> str:
    return get_device_properties(device).name


def get_device_properties(device=None) -> DeviceProperties:
    index = _index(device)
    total = torch.accelerator.get_memory_info(index)[1]
    return DeviceProperties(f"{NAME} (simulated accelerator)", total)


def get_amp_supported_dtype() -> list[torch.dtype]:
    return [torch.float16, torch.bfloat16]


def autocast_dtype() -> torch.dtype | None:
    """The default autocast dtype asked for by $TORCHPORT_SIM_AUTOCAST_DTYPE
    (``float16``, CUDA's and the default, or ``bfloat16``, TorchTPU's)."""
    raw = os.environ.get("TORCHPORT_SIM_AUTOCAST_DTYPE", "")
    if not raw:
        return None
    if raw not in AUTOCAST_DTYPES:
        choices = ", ".join(AUTOCAST_DTYPES)
        raise ValueError(
            f"TORCHPORT_SIM_AUTOCAST_DTYPE={raw!r} is not one of {choices}"
        )
    return AUTOCAST_DTYPES[raw]


def create() -> types.ModuleType:
    """A fresh module object named ``torch.tpsim`` (so errors name it so)."""
    module = types.ModuleType(f"torch.{NAME}", __doc__)
    for member in (
        is_available,
        device_count,
        current_device,
        _is_in_bad_fork,
        _lazy_init,
        manual_seed,
        manual_seed_all,
        get_rng_state,
        set_rng_state,
        device,
        get_amp_supported_dtype,
        is_initialized,
        set_device,
        synchronize,
        Stream,
        Event,
        current_stream,
        default_stream,
        set_stream,
        stream,
        get_device_name,
        get_device_properties,
    ):
        setattr(module, member.__name__, member)
    return module
