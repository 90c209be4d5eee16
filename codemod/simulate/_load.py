"""Loading the simulator into this process (irreversible: PrivateUse1 is
taken for the life of the process)."""

from __future__ import annotations

import os

from ._build import NAME, SimulatorError, build

MAX_DEVICES = 16


def _device_count(devices: int | None) -> int:
    if devices is None:
        raw = os.environ.get("TORCHPORT_SIM_DEVICES", "2")
        try:
            devices = int(raw)
        except ValueError:
            raise SimulatorError(
                f"TORCHPORT_SIM_DEVICES={raw!r} is not a number of devices"
            ) from None
    if not 0 <= devices <= MAX_DEVICES:
        raise SimulatorError(
            f"the simulator offers 0 to {MAX_DEVICES} devices, not {devices}"
        )
    return devices


def is_loaded() -> bool:
    import torch

    return torch._C._get_privateuse1_backend_name() == NAME and hasattr(
        torch.ops.tpsim, "device_count"
    )


def load(devices: int | None = None):
    """Build if needed and load the simulator; returns ``torch.device("tpsim")``.

    Idempotent. ``devices`` (default ``$TORCHPORT_SIM_DEVICES`` or 2) is fixed
    by the first load in a process.
    """
    import torch

    count = _device_count(devices)
    if is_loaded():
        loaded = torch.ops.tpsim.device_count()
        if devices is not None and devices != loaded:
            raise SimulatorError(
                f"the simulator is already loaded with {loaded} devices, not {devices}"
            )
        return torch.device(NAME)
    taken = torch._C._get_privateuse1_backend_name()
    if taken not in ("privateuseone", NAME):  # NAME: an earlier load() failed
        raise SimulatorError(
            f"cannot load the {NAME} simulator: PrivateUse1 already belongs to "
            f"the {taken!r} backend in this process (e.g. TorchTPU's 'tpu'); "
            "run the simulator in a process of its own"
        )
    if torch._C._dispatch_has_kernel_for_dispatch_key(
        "aten::empty.memory_format", "PrivateUse1"
    ):
        raise SimulatorError(
            f"cannot load the {NAME} simulator: another PrivateUse1 backend "
            "already registered kernels in this process"
        )
    library = build()
    os.environ["TORCHPORT_SIM_DEVICES"] = str(count)  # read once by the library
    if taken != NAME:
        torch.utils.rename_privateuse1_backend(NAME)
    torch.ops.load_library(str(library))

    from . import _device_module

    torch._register_device_module(NAME, _device_module.create())
    try:
        dtype = _device_module.autocast_dtype()
    except ValueError as error:
        raise SimulatorError(str(error)) from None
    if dtype is not None:  # thread-local in torch: this thread's default
        torch.set_autocast_dtype(NAME, dtype)
    # Tensor.is_tpsim, Tensor.tpsim(), Module.tpsim(), storages: every real
    # backend has these, and torch code tests `is_<backend>`.
    torch.utils.generate_methods_for_privateuse1_backend(for_storage=True)
    try:
        from . import _dist
    except (ImportError, AttributeError):  # torch built without distributed
        pass
    else:
        _dist.register()
    return torch.device(NAME)
