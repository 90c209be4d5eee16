"""scripts/cpu_host.py counts the AMP calls that run enabled on a CPU-only host: each
count is checked against what real torch does with the same module on this host."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from cpu_host import cpu_autocasts  # noqa: E402

ACCESSOR = '''
import functools

import torch


@functools.cache
def _DEVICE():
    """The accelerator found on first use, else the CPU."""
    if torch.accelerator.device_count() > 0:
        return torch.accelerator.current_accelerator()
    return torch.device("cpu")
'''

# Each module binds ``amp`` to one AMP object as its last statement.
MODULES = {
    "cuda autocast": 'import torch\namp = torch.autocast("cuda")\n',
    "deprecated cuda autocast": "import torch\namp = torch.cuda.amp.autocast()\n",
    "imported cuda autocast": (
        "import torch\nfrom torch.cuda.amp import autocast\namp = autocast()\n"
    ),
    "cpu autocast": 'import torch\namp = torch.autocast("cpu")\n',
    "disabled cpu autocast": 'import torch\namp = torch.autocast("cpu", enabled=False)\n',
    "accessor type": ACCESSOR + "amp = torch.autocast(_DEVICE().type)\n",
    "keyword accessor type": ACCESSOR
    + "amp = torch.amp.autocast(device_type=_DEVICE().type)\n",
    "accessor type with the cuda fallback": ACCESSOR
    + 'amp = torch.autocast(_DEVICE().type if _DEVICE().type != "cpu" else "cuda")\n',
    "decorator form": (
        "import torch\namp = torch.autocast("
        '(torch.accelerator.current_accelerator() or torch.device("cuda")).type)\n'
    ),
    "bound device choice": (
        "import torch\n"
        'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "amp = torch.autocast(device.type)\n"
    ),
    "bound type string": (
        "import torch\n"
        'device_type = "cuda" if torch.cuda.is_available() else "cpu"\n'
        "amp = torch.autocast(device_type)\n"
    ),
    "branch the host does not take": (
        "import contextlib, torch\n"
        'device_type = "cuda" if torch.cuda.is_available() else "cpu"\n'
        'amp = contextlib.nullcontext() if device_type == "cpu"'
        " else torch.autocast(device_type)\n"
    ),
    "branch the host takes": (
        "import contextlib, torch\n"
        'device_type = "cuda" if torch.cuda.is_available() else "cpu"\n'
        'amp = torch.autocast(device_type) if device_type == "cpu"'
        " else contextlib.nullcontext()\n"
    ),
    "cuda scaler": "import torch\namp = torch.cuda.amp.GradScaler()\n",
    "default scaler": "import torch\namp = torch.amp.GradScaler()\n",
    "accessor scaler": ACCESSOR + "amp = torch.amp.GradScaler(_DEVICE().type)\n",
    "scaler keyword": ACCESSOR + "amp = torch.amp.GradScaler(device=_DEVICE().type)\n",
}


def _enabled_on_the_cpu(source: str) -> bool:
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(source, "<module>", "exec"), namespace)
        amp = namespace["amp"]
        if isinstance(amp, torch.amp.GradScaler):
            return amp.is_enabled()
        with amp:
            return torch.is_autocast_enabled("cpu")


@pytest.mark.skipif(
    torch.accelerator.device_count() > 0, reason="needs a host without an accelerator"
)
@pytest.mark.parametrize("name", sorted(MODULES))
def test_the_count_is_what_torch_does_on_a_cpu_host(name):
    source = MODULES[name]
    assert cpu_autocasts(source) == int(_enabled_on_the_cpu(source))


def test_a_value_it_cannot_read_is_not_counted():
    source = "import torch\ndef step(kind):\n    return torch.autocast(kind)\n"
    assert cpu_autocasts(source) == 0
    relative = "from . import amp\nimport torch\nx = torch.autocast(amp.kind)\n"
    assert cpu_autocasts(relative) == 0
    rebound = 'import torch\nt = "cpu"\nt = "cuda"\namp = torch.autocast(t)\n'
    assert cpu_autocasts(rebound) == 0


def test_the_check_counts_calls_a_port_enabled():
    import realcode_check

    before = 'import torch\nwith torch.autocast("cuda"):\n    pass\n'
    after = ACCESSOR + "with torch.autocast(_DEVICE().type):\n    pass\n"
    assert cpu_autocasts(after) - cpu_autocasts(before) == 1
    assert "cpu chg" in realcode_check.Row.COLUMNS
