"""The tpsim simulator as an instrument: protected device memory, the autocast
dtype a run asks for, a project's device-parameterised tests.
tests/test_simulator.py has the rest; like it, nothing here loads the simulator
into pytest's process.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from codemod import simulate

pytestmark = pytest.mark.simulator

ROOT = Path(__file__).resolve().parents[1]

PEEK = """\
import ctypes
import torch
x = torch.arange(4.0, device="tpsim")
print(ctypes.c_float.from_address(x.data_ptr() + 4).value)
"""


def test_a_host_read_of_device_memory_faults_and_is_explained(tmp_path, capfd):
    script = tmp_path / "peek.py"
    script.write_text(PEEK)
    assert simulate.run([sys.executable, str(script)], cwd=tmp_path) == 128 + 11
    err = capfd.readouterr().err
    assert "tpsim: host code read or wrote device memory" in err, err
    assert f'File "{script}", line 4' in err, err  # faulthandler's Python line
    assert err.index("tpsim: host code") < err.index(f'File "{script}"')


def test_device_memory_is_open_to_the_simulator_itself(tmp_path, capfd):
    code = (
        "import torch\n"
        "x = torch.arange(6.0, device='tpsim').view(2, 3)\n"
        "y = torch.empty(0, device='tpsim').set_(x.untyped_storage()).resize_(8)\n"
        "print(x.sum().item(), x.t().contiguous().tolist(), y[:6].tolist())\n"
    )
    assert simulate.run([sys.executable, "-c", code], cwd=tmp_path) == 0
    out = capfd.readouterr().out
    assert "15.0 [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]] [0.0, 1.0, 2.0, 3.0" in out


# The precision choice of issue 35's item 2, as a port keeps it: CUDA's check is
# False elsewhere, so an accelerator whose autocast computes bfloat16 is given
# float16. With CUDA's default (float16) the two agree and nothing shows.
PRECISION = """\
import torch
DEVICE = torch.accelerator.current_accelerator()
dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
a = torch.randn(4, 4, device=DEVICE)
with torch.autocast(DEVICE.type):
    default = (a @ a).dtype
with torch.autocast(DEVICE.type, dtype=dtype):
    chosen = (a @ a).dtype
print(default, chosen, "same" if default == chosen else "differs")
"""


@pytest.mark.parametrize(
    "option, printed",
    [
        ([], "torch.float16 torch.float16 same"),
        (["--autocast-dtype", "bfloat16"], "torch.bfloat16 torch.float16 differs"),
    ],
    ids=["cuda-default", "bfloat16"],
)
def test_the_autocast_dtype_shows_a_precision_choice(tmp_path, option, printed):
    from tests.cli_helpers import run_cli

    script = tmp_path / "precision.py"
    script.write_text(PRECISION)
    proc = run_cli(["simulate", *option, "--", sys.executable, str(script)])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == printed


def test_a_bad_autocast_dtype_in_the_environment_is_refused(tmp_path, capfd):
    env = dict(os.environ, TORCHPORT_SIM_AUTOCAST_DTYPE="float8")
    code = "import torch"
    assert simulate.run([sys.executable, "-c", code], env=env) == 1
    assert (
        "TORCHPORT_SIM_AUTOCAST_DTYPE='float8' is not one of" in capfd.readouterr().err
    )


# A conftest that knows cuda, tpu and mps only, as a real vision library's does,
# and a test parameterised by a mark.
CONFTEST = """\
import pytest
import torch

KNOWN = {"cpu": torch.device("cpu")}

@pytest.fixture
def accelerator(request):
    name = request.config.getoption("--device")
    if name not in KNOWN:
        pytest.skip(f"{name} is not available")
    return KNOWN[name]

def pytest_addoption(parser):
    parser.addoption("--device", default="cpu")

def pytest_generate_tests(metafunc):
    if "device" in metafunc.fixturenames:
        known = {"cpu": torch.device("cpu")}
        if torch.cuda.is_available():
            known["cuda"] = torch.device("cuda:0")
        metafunc.parametrize("device", [known[metafunc.config.getoption("--device")]])
"""
TESTS = """\
import pytest
import torch

def test_ones(device):
    assert torch.ones(2, device=device).sum().item() == 2

@pytest.mark.parametrize("where", ["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
def test_marked(where):
    print("RAN ON", torch.zeros(1, device=where).device.type)

def test_fixture(accelerator):
    assert torch.zeros(1, device=accelerator).device == accelerator
    print("FIXTURE ON", accelerator)
"""


def test_a_projects_device_parameterised_tests_run_on_tpsim(tmp_path, capfd):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_it.py").write_text(TESTS)
    argv = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider"]
    assert simulate.run(argv, cwd=tmp_path) == 0
    assert "3 passed" in capfd.readouterr().out  # the plugin is idle
    asked = argv + ["--tpsim-param", "device", "--tpsim-fixture", "accelerator"]
    env = dict(os.environ, TORCHPORT_SIM_PYTEST_PARAM="where")
    assert simulate.run(asked + ["-rA"], cwd=tmp_path, env=env) == 0
    out = capfd.readouterr().out
    assert "5 passed" in out and "RAN ON tpsim" in out, out
    assert "test_ones[tpsim]" in out and "test_marked[tpsim]" in out, out
    assert "FIXTURE ON tpsim:0" in out, out


def test_a_run_can_keep_no_allocator_statistics(tmp_path, capfd):
    """TORCHPORT_SIM_MEMORY_STATS=0: a backend without them (TorchTPU has none),
    so a port that calls them unguarded fails as it would there."""
    env = dict(os.environ, TORCHPORT_SIM_MEMORY_STATS="0")
    code = "import torch\ntorch.ones(1, device='tpsim')\ntorch.accelerator.memory_allocated()\n"
    script = tmp_path / "stats.py"
    script.write_text(code)
    assert simulate.run([sys.executable, str(script)], env=env) == 1
    err = capfd.readouterr().err
    assert f"{script}:3: RuntimeError: tpsim keeps no allocator statistics" in err, err
