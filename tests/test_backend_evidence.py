"""The evidence of codemod/catalog/backends.py for the device-module idioms, checked
against the modules themselves rather than their source files (tests/test_backends.py
reads those): ``hasattr(torch.xpu, name)``, ``hasattr(torch.mps, name)`` (and the CPU's
and CUDA's) in the installed CPU wheel, and what ``torch.tpsim``, the simulator's module,
has, in a Python with the simulator loaded.

``torch.tpsim`` holds what torch requires of a backend's module and what TorchTPU's
``torch.tpu`` has besides (codemod/simulate/_device_module.py): the idioms it lacks are
the ones such a backend does not have, which torchport should not rely on
(tests/test_simulated_runs.py shows the programs that do fail there).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from codemod.catalog.backends import IDIOMS, UNKNOWN, YES, _callee
from tests.conftest import CPU_ENV, SIMULATED_DEVICES

IN_WHEEL = ("xpu", "mps", "cpu", "cuda")
# idiom -> the member of the device module it uses
MEMBERS = {
    idiom: _callee(idiom)[1:] for idiom in IDIOMS if _callee(idiom).startswith(".")
}
ACCELERATOR_CALLS = [
    _callee(idiom)[len("torch.accelerator.") :]
    for idiom in IDIOMS
    if _callee(idiom).startswith("torch.accelerator.")
]
# What torch.tpsim has of MEMBERS: what torch.manual_seed, torch.random.fork_rng and
# torch.utils.checkpoint look up on a backend's module (TorchTPU has no initial_seed).
TPSIM_HAS = {"manual_seed_all", "get_rng_state", "set_rng_state"}


def test_there_are_device_module_idioms():
    assert len(MEMBERS) >= 3 and "manual_seed_all" in MEMBERS.values()


@pytest.mark.parametrize(
    "idiom, backend",
    [pytest.param(i, b, id=f"{b}:{i}") for i in MEMBERS for b in IN_WHEEL],
)
def test_the_row_says_what_the_module_has(idiom, backend):
    evidence = IDIOMS[idiom][backend]
    has = hasattr(getattr(torch, backend), MEMBERS[idiom])
    assert evidence.status != UNKNOWN, f"hasattr settles it: {has}"
    assert (evidence.status == YES) == has, evidence


_PROBE = """\
import json, sys
import torch

members, calls = json.loads(sys.argv[1])
module = torch.get_device_module(torch.accelerator.current_accelerator())
torch.ones(4).to("tpsim")
result = {"module": module.__name__, "has": {m: hasattr(module, m) for m in members}}
result["calls"] = {}
for name in calls:
    try:
        getattr(torch.accelerator, name)()
        result["calls"][name] = "ok"
    except Exception as error:
        result["calls"][name] = f"{type(error).__name__}: {error}"
side = torch.Stream()
side.wait_stream(torch.accelerator.current_stream())
with side:
    start, end = torch.Event(enable_timing=True), torch.Event(enable_timing=True)
    start.record()
    torch.ones(4).to("tpsim").sum()
    end.record()
end.synchronize()
result["contract"] = [side.query(), start.elapsed_time(end) >= 0]
print(json.dumps(result))
"""


@pytest.fixture(scope="module")
def tpsim():
    """What the simulated accelerator offers of the idioms, asked in a Python of its
    own (loading a PrivateUse1 backend cannot be undone)."""
    from codemod import simulate

    simulate.build()
    argument = json.dumps([sorted(set(MEMBERS.values())), ACCELERATOR_CALLS])
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, argument],
        env=simulate.environment(SIMULATED_DEVICES, base=CPU_ENV),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.simulator
def test_the_simulated_device_module_has_only_what_torch_requires(tpsim):
    assert tpsim["module"] == "torch.tpsim"
    assert {m for m, has in tpsim["has"].items() if has} == TPSIM_HAS


@pytest.mark.simulator
def test_torch_streams_and_events_run_on_the_simulated_device(tpsim):
    # What TP305-TP307 write (TORCH_CONTRACT): made, entered, recorded, timed there.
    assert tpsim["contract"] == [True, True]


@pytest.mark.simulator
def test_the_torch_accelerator_idioms_run_on_the_simulated_device(tpsim):
    assert ACCELERATOR_CALLS and set(tpsim["calls"]) == set(ACCELERATOR_CALLS)
    assert {n: r for n, r in tpsim["calls"].items() if r != "ok"} == {}
