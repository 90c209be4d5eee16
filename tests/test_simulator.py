"""The tpsim simulated accelerator (codemod/simulate): real builds, real runs.

Loading a PrivateUse1 backend cannot be undone, so nothing here loads it into
the pytest process. The in-process features are checked by one simulated
child Python running ``codemod.simulate.selfcheck`` (started through
``simulate.run`` and shared by the xdist workers); one test per check asserts
on its outcome. The other tests start children of their own. The build is
cached (~/.cache/torchport or $TORCHPORT_CACHE_DIR); a cold one takes about
40 s of CPU on two cores.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codemod import simulate
from codemod.simulate import _build

pytestmark = pytest.mark.simulator

ROOT = Path(__file__).resolve().parents[1]
SAME = "Expected all tensors to be on the same device, but found at least two devices"
CHECKS = [
    "zero_dim",
    "stream_order",
    "tpu_module",
    "accelerator",
    "same_device",
    "operators",
    "layers",
    "training",
    "generator",
    "streams_events",
    "memory",
    "pinned",
    "autocast",
    "grad_scaler",
    "serialization",
    "compile",
    "device_module",
]


def _shared_dir(tmp_path_factory) -> Path:
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def checks(tmp_path_factory):
    """One simulated Python runs all checks; xdist workers share its results."""
    shared = _shared_dir(tmp_path_factory)
    out = shared / "simulator_checks.json"
    with open(shared / "simulator_checks.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not out.exists():
            argv = [sys.executable, "-m", "codemod.simulate.selfcheck", "--json"]
            simulate.run(argv + [str(out)], cwd=ROOT)  # exits 1 if one fails
    assert out.exists(), "the self-check did not finish"
    return json.loads(out.read_text())


def test_every_check_ran(checks):
    assert sorted(checks) == sorted(CHECKS)


@pytest.mark.parametrize("name", CHECKS)
def test_in_simulated_process(checks, name):
    assert checks[name] is None, checks[name]


def test_checkpoint_saved_on_device_loads_without_simulator(checks, tmp_path_factory):
    """A checkpoint written on tpsim loads in a plain torch with map_location."""
    path = _shared_dir(tmp_path_factory) / "checkpoint.pt"
    code = (
        "import torch; c = torch.load(%r, map_location='cpu'); "
        "assert c['t'].tolist() == [0, 1, 2, 3, 4, 5] and c['m']['weight'].is_cpu"
    ) % str(path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHPORT_SIM")}
    plain = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )
    assert plain.returncode == 0, plain.stderr


def _ddp_rank(rank: int, store: str, same_device: bool) -> None:
    """One rank of a DDP program, as a ported script would write it."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    device = torch.device("tpsim", 0 if same_device else rank)
    torch.accelerator.set_device_index(device.index)
    backend = dist.get_default_backend_for_device(device)
    assert backend == "tpccl"
    # A file store: no port to pick, so no port to collide with.
    init = f"file://{store}"
    dist.init_process_group(backend, rank=rank, world_size=2, init_method=init)
    torch.manual_seed(0)
    model = DDP(
        torch.nn.Linear(4, 2).to(device), device_ids=[device.index] if rank else None
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(rank)  # different data per rank, same weights after
    for _ in range(2):
        opt.zero_grad()
        model(torch.randn(8, 4, device=device)).pow(2).mean().backward()
        opt.step()
    weight = model.module.weight.detach()
    everyone = [torch.empty_like(weight) for _ in range(2)]
    dist.all_gather(everyone, weight)
    assert everyone[0].device == device and everyone[0].cpu().equal(everyone[1].cpu())
    total = torch.full((2,), rank + 1.0, device=device)
    dist.all_reduce(total)
    assert total.tolist() == [3.0, 3.0]
    mine = torch.empty(2, device=device)
    dist.reduce_scatter_tensor(mine, torch.arange(4.0, device=device))
    assert mine.tolist() == [4.0 * rank, 4.0 * rank + 2]
    value = torch.full((2,), rank + 1.0, device=device)
    dist.reduce(value, dst=1)
    assert rank == 0 or value.tolist() == [3.0, 3.0]
    swapped = torch.empty(2, device=device)  # element i goes to rank i
    dist.all_to_all_single(swapped, torch.tensor([0.0, 1.0], device=device) + 10 * rank)
    assert swapped.tolist() == [rank, 10.0 + rank]
    parts = [torch.empty(1, device=device) for _ in range(2)]
    dist.all_to_all(
        parts, [torch.full((1,), 10.0 * rank + i, device=device) for i in range(2)]
    )
    assert [p.item() for p in parts] == [rank, 10.0 + rank]
    try:  # a CPU tensor: refused, as NCCL refuses it
        dist.all_reduce(torch.ones(1))
    except RuntimeError as error:
        assert "No backend type associated with device type cpu" in str(error)
    else:
        raise AssertionError("tpccl reduced a CPU tensor")
    both = dist.new_group(backend="cpu:gloo,tpsim:tpccl")  # serves the CPU too
    on_host = torch.ones(1)
    dist.all_reduce(on_host, group=both)
    assert on_host.item() == 2.0
    dist.barrier()
    dist.destroy_process_group()


DDP_MAIN = """\
import sys
import torch.multiprocessing as mp
from torch.multiprocessing import ProcessRaisedException
sys.path.insert(0, sys.argv[1])
from tests.test_simulator import _ddp_rank
if __name__ == "__main__":
    mp.spawn(_ddp_rank, args=(sys.argv[2] + ".1", False), nprocs=2)
    try:  # both ranks on tpsim:0, as when set_device_index is forgotten
        mp.spawn(_ddp_rank, args=(sys.argv[2] + ".2", True), nprocs=2)
    except ProcessRaisedException as error:
        assert "ranks 0 and 1 both use tpsim:0" in str(error), error
        print("REFUSED")
"""


def test_ddp_with_two_processes(tmp_path, capfd):
    script = tmp_path / "ddp.py"
    script.write_text(DDP_MAIN)
    argv = [sys.executable, str(script), str(ROOT), str(tmp_path / "store")]
    code = simulate.run(argv, cwd=tmp_path)
    out, err = capfd.readouterr()
    assert code == 0 and "REFUSED" in out, err


MISSING_TO = """\
import torch
DEVICE = torch.accelerator.current_accelerator(check_available=True)
model = torch.nn.Linear(4, 2).to(DEVICE)
batch = torch.randn(3, 4)
print(model(batch))
"""
SPAWNED = """\
import torch, torch.multiprocessing as mp
DEVICE = torch.accelerator.current_accelerator(check_available=True)
def work(rank):
    torch.ones(2, device=DEVICE) + torch.ones(2)
if __name__ == "__main__":
    mp.spawn(work, nprocs=2)
"""


NO_WAIT = """\
import torch
DEVICE = torch.accelerator.current_accelerator()
side = torch.Stream(DEVICE)
x = torch.ones(4, device=DEVICE)
side.wait_stream(torch.accelerator.current_stream())
with side:
    y = x * 2
print(y.sum().item())  # no torch.accelerator.current_stream().wait_stream(side)
"""
CPU_COLLECTIVE = """\
import tempfile
import torch
import torch.distributed as dist
DEVICE = torch.accelerator.current_accelerator()
store = "file://" + tempfile.mkdtemp() + "/store"
dist.init_process_group(dist.get_default_backend_for_device(DEVICE), rank=0, world_size=1, init_method=store)
dist.all_reduce(torch.ones(2, device=DEVICE))
dist.all_reduce(torch.ones(2))
"""


@pytest.mark.parametrize(
    "source, line, error, hint",
    [
        (
            MISSING_TO,
            5,
            f"RuntimeError: {SAME}, tpsim:0 and cpu!",
            "a CPU tensor met a tpsim tensor: a `.to(DEVICE)` is missing",
        ),
        (
            "import torch\n\ntorch.get_device_module('tpsim').memory_allocated()\n",
            3,
            "AttributeError: module 'torch.tpsim' has no attribute 'memory_allocated'",
            "use torch.accelerator.memory_allocated()",
        ),
        (
            "import torch\nx = torch.ones(2, device='cuda')\n",
            2,
            "AssertionError: Torch not compiled with CUDA enabled",
            "this call is CUDA-only `x = torch.ones(2, device='cuda')`",
        ),
        (
            SPAWNED,
            4,
            f"RuntimeError: {SAME}, tpsim:0 and cpu!",
            "a CPU tensor met a tpsim tensor",
        ),
        (
            NO_WAIT,
            8,
            "RuntimeError: tpsim stream check: a tensor's memory on tpsim:0 (16 "
            "bytes) is read on the default stream of tpsim:0, but it was written on "
            "stream ",
            "a stream's results were used without waiting for it",
        ),
        (
            CPU_COLLECTIVE,
            8,
            "RuntimeError: No backend type associated with device type cpu",
            "a CPU tensor went into a collective of the tpsim group",
        ),
        (
            "import torch\nx = torch.ones(3, device='tpsim')\nx.index_select(0, "
            "torch.tensor(1))\n",
            3,
            f"RuntimeError: {SAME}, tpsim:0 and cpu!",
            "a CPU tensor met a tpsim tensor",
        ),
    ],
    ids=[
        "missing-to",
        "vendor-module",
        "cuda-only",
        "spawned-child",
        "no-wait-stream",
        "cpu-collective",
        "zero-dim-index",
    ],
)
def test_first_device_error_is_located_and_explained(
    tmp_path, capfd, source, line, error, hint
):
    script = tmp_path / "train.py"
    script.write_text(source)
    assert simulate.run([sys.executable, str(script)], cwd=tmp_path) == 1
    err = capfd.readouterr().err
    located = f"{script}:{line}: {error}"
    assert located in err and err.index("Traceback") < err.index(located), err
    assert f"hint: {hint}" in err, err


def test_run_exit_codes_and_nested_processes(tmp_path, capfd):
    assert simulate.run([sys.executable, "-c", "raise SystemExit(7)"]) == 7
    assert (
        simulate.run([sys.executable, "-c", "import os; os.kill(os.getpid(), 15)"])
        == 128 + 15
    )
    nested = (
        "import subprocess, sys; sys.exit(subprocess.run([sys.executable, '-c', "
        "'import torch; assert torch.accelerator.device_count() == 3']).returncode)"
    )
    assert simulate.run([sys.executable, "-c", nested], devices=3) == 0
    test = tmp_path / "test_on_device.py"
    test.write_text(
        "import torch\n\n\ndef test_device():\n"
        "    assert torch.ones(1, device='tpsim').is_tpsim\n"
    )
    pytest_argv = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        str(test),
    ]
    assert simulate.run(pytest_argv, cwd=tmp_path) == 0
    assert "1 passed" in capfd.readouterr().out
    cli = [
        sys.executable,
        "-m",
        "codemod.simulate",
        "--devices",
        "1",
        "--",
        sys.executable,
        "-c",
    ]
    check_one = "import torch; assert torch.accelerator.device_count() == 1"
    assert subprocess.run(cli + [check_one], cwd=ROOT).returncode == 0
    assert (
        subprocess.run(cli[:3] + ["--devices", "99", "--", "true"], cwd=ROOT).returncode
        == 2  # bad usage
    )


def test_build_only_is_silent_when_cached():
    simulate.build()
    cli = subprocess.run(
        [sys.executable, "-m", "codemod.simulate", "--build-only"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0 and cli.stderr == ""
    assert (
        Path(cli.stdout.strip()) == _build.library_path()
        and _build.library_path().is_file()
    )


def test_another_privateuse1_backend_is_refused():
    code = (
        "import torch; torch.utils.rename_privateuse1_backend('tpu')\n"
        "from codemod.simulate import load, SimulatorError\n"
        "try: load()\n"
        "except SimulatorError as e: print(e)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True
    )
    assert (
        "PrivateUse1 already belongs to the 'tpu' backend" in proc.stdout
    ), proc.stderr


def test_missing_compiler_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHPORT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-c++"))
    with pytest.raises(simulate.SimulatorError, match="no C\\+\\+ compiler found"):
        simulate.build()


def test_cache_key_follows_torch_version_and_sources(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHPORT_CACHE_DIR", str(tmp_path))
    folder = _build.build_dir()
    assert folder.parent == tmp_path / "simulator"
    assert folder.name.startswith(f"torch-{_build.torch_version()}-py3")
    changed = tmp_path / "csrc"
    shutil.copytree(_build.CSRC, changed)
    (changed / "sim.h").write_text((changed / "sim.h").read_text() + "\n")
    monkeypatch.setattr(_build, "CSRC", changed)
    assert _build.build_dir() != folder


def test_concurrent_builds_share_one_compile(tmp_path):
    """Two builders at once: one compiles, the other waits and reuses it, even
    over a stale cpp_extension lock a killed build left behind."""
    built = simulate.build().parent
    env = dict(os.environ, TORCHPORT_CACHE_DIR=str(tmp_path))
    copy = tmp_path / "simulator" / built.name
    shutil.copytree(built, copy)  # with its objects: ninja only relinks
    (copy / "built.json").unlink()
    (copy / "lock").touch()
    code = "from codemod import simulate; print(simulate.build())"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert {out.strip() for out, _ in outs} == {str(copy / "tpsim.so")}
    assert sum(err.count("compiling the tpsim simulator") for _, err in outs) == 1
    assert (copy / "built.json").is_file()


def test_torchport_simulate_runs_a_program_and_its_tests(tmp_path):
    """The subcommand, as a user types it: a placement a CPU run cannot catch is
    located with its hint; a test run sees the simulated devices."""
    from tests.cli_helpers import run_cli

    script = tmp_path / "train.py"
    script.write_text(MISSING_TO)
    proc = run_cli(["simulate", "--", sys.executable, str(script)], cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert f"{script}:5: RuntimeError: {SAME}, tpsim:0 and cpu!" in proc.stderr
    assert "hint: a CPU tensor met a tpsim tensor" in proc.stderr
    count = "import torch; assert torch.accelerator.device_count() == 3"
    proc = run_cli(["simulate", "--devices", "3", "--", sys.executable, "-c", count])
    assert proc.returncode == 0, proc.stderr
    usage = run_cli(["simulate", "--help"])
    assert usage.returncode == 0 and "usage: torchport simulate" in usage.stdout
