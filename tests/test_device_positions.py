"""The positions torchport rewrites a device literal in are device parameters of the
installed torch: its real signature names them so (where Python can read one)."""

import importlib
import inspect

import pytest
import torch

from codemod.passes.device_positions import DEVICE_KEYWORDS, DEVICE_POSITIONS

DEVICE_PARAMETERS = {"device", "device_type", "map_location"}


def _resolve(qualified: str):
    parts = qualified.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for part in parts[split:]:
            found = getattr(found, part)
        return found
    raise LookupError(qualified)


def _parameters(callee):
    try:
        signature = inspect.signature(callee)
    except (TypeError, ValueError):  # a builtin that does not say
        return None
    return [p for p in signature.parameters.values() if p.name != "self"]


# Builtins Python reads no signature of: called with the CPU in that position (what
# they return is not the point; that they take a device type there is).
BUILTIN_CALLS = {
    "torch.device": lambda device: torch.device(device),
    "torch.Stream": lambda device: torch.Stream(device),
    "torch.Event": lambda device: torch.Event(device),
    "torch.Generator": lambda device: torch.Generator(device),
    "torch.get_autocast_dtype": lambda device: torch.get_autocast_dtype(device),
    "torch.is_autocast_enabled": lambda device: torch.is_autocast_enabled(device),
    "torch.set_autocast_dtype": lambda device: torch.set_autocast_dtype(
        device, torch.get_autocast_dtype(device)
    ),
    "torch.set_autocast_enabled": lambda device: torch.set_autocast_enabled(
        device, torch.is_autocast_enabled(device)
    ),
}


@pytest.mark.parametrize("callee", sorted(DEVICE_POSITIONS))
def test_position_is_a_device_parameter(callee):
    position, _ = DEVICE_POSITIONS[callee]
    parameters = _parameters(_resolve(callee))
    if parameters is None:
        assert position == 0, callee
        BUILTIN_CALLS[callee]("cpu")  # raises if the first argument is no device
        return
    parameter = parameters[position]
    assert parameter.name in DEVICE_PARAMETERS, (callee, parameter)
    assert parameter.kind in (
        parameter.POSITIONAL_ONLY,
        parameter.POSITIONAL_OR_KEYWORD,
    )


def test_keywords_are_device_parameters():
    assert set(DEVICE_KEYWORDS) <= DEVICE_PARAMETERS
