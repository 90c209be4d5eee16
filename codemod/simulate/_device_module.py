"""``torch.tpsim``: the device module, deliberately minimal.

A real vendor module (``torch.cuda``) offers far more than ``torch.accelerator``
does; code that leans on it (``torch.get_device_module(dev).synchronize()``,
``.Stream``, ``.memory_allocated()``) is not portable. This module holds only
what torch itself looks up on a PrivateUse1 backend's module, so such code
fails here with AttributeError, as it would on a new backend:

- ``is_available``, ``device_count``: ``torch.accelerator.is_available()`` and
  ``device_count()`` delegate to them (also DataLoader, serialization).
- ``_is_in_bad_fork``, ``manual_seed_all``: ``torch.manual_seed`` seeds a
  custom backend through them (torch/random.py ``_seed_custom_device``).
- ``get_rng_state``, ``set_rng_state``, ``device``: ``torch.utils.checkpoint``
  (preserve_rng_state) and ``torch.random.fork_rng`` save and restore device
  RNG state inside ``device(index)``; ``torch.load``/storage copies enter
  ``device(...)`` too (torch/_utils.py ``_to``).
- ``get_amp_supported_dtype``: ``torch.autocast`` requires it of a custom
  backend (torch/amp/autocast_mode.py).
- ``is_initialized``, ``set_device``: ``init_device_mesh`` / ``DeviceMesh`` pick
  each process's device through them (torch/distributed/device_mesh.py).

Everything else belongs to ``torch.accelerator``, ``torch.Stream`` and
``torch.Event``.
"""

from __future__ import annotations

import types

import torch

NAME = "tpsim"


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


def _is_in_bad_fork() -> bool:
    # Device memory is host memory: a forked child can keep using it.
    return False


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


def get_amp_supported_dtype() -> list[torch.dtype]:
    return [torch.float16, torch.bfloat16]


def create() -> types.ModuleType:
    """A fresh module object named ``torch.tpsim`` (so errors name it so)."""
    module = types.ModuleType(f"torch.{NAME}", __doc__)
    for function in (
        is_available,
        device_count,
        _is_in_bad_fork,
        manual_seed_all,
        get_rng_state,
        set_rng_state,
        device,
        get_amp_supported_dtype,
        is_initialized,
        set_device,
    ):
        setattr(module, function.__name__, function)
    return module
