"""What the self-check modules share: the loaded simulator, its device, the
registry of checks and their helpers (see selfcheck.py)."""

from __future__ import annotations

import tempfile

import torch

from ._load import load

load()  # before naming the device: "tpsim" is a device type only once loaded
SAME = "Expected all tensors to be on the same device, but found at least two devices"
DEV = torch.device("tpsim")
CHECKS = {}
FOLDER = [tempfile.gettempdir()]  # where checks leave files (a checkpoint)


def check(function):
    CHECKS[function.__name__.removeprefix("check_")] = function
    return function


def raises(error, text, function, *args, **kwargs):
    try:
        function(*args, **kwargs)
    except error as caught:
        assert text in str(caught), str(caught)
        return
    raise AssertionError(f"{function} did not raise {error.__name__}")


def close(a, b):
    torch.testing.assert_close(a.detach().cpu(), b.detach(), atol=1e-5, rtol=1e-4)
