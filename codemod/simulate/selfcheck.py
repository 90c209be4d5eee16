"""Self-check: the simulator behaves like an accelerator with this torch.

``python -m codemod.simulate.selfcheck [--json PATH]`` runs one check per
feature in one process, on two simulated devices (importing this module
loads the simulator), printing ``ok`` or ``FAIL`` for each; the exit status
is 1 when one fails. tests/test_simulator.py runs it once, through
``run()``, and asserts on each result.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, TensorDataset

from . import _selfcheck_ports  # noqa: F401 (its checks: the faults of ports)
from ._selfcheck_base import CHECKS, DEV, FOLDER, SAME, check, close, raises


def same(module, *shape):
    """The module and its gradients compute the same on the device and CPU."""
    twin = copy.deepcopy(module).to(DEV)
    x = torch.randn(*shape)
    outputs = [module(x), twin(x.to(DEV))]
    outputs = [o[0] if isinstance(o, tuple) else o for o in outputs]
    for o in outputs:
        o.pow(2).sum().backward()
    assert outputs[1].device.type == "tpsim"
    close(outputs[1], outputs[0])
    for a, b in zip(module.parameters(), twin.parameters()):
        close(b.grad, a.grad)


@check
def check_accelerator():
    assert torch.accelerator.current_accelerator(check_available=True) == DEV
    assert torch.accelerator.is_available() and torch.accelerator.device_count() == 2
    assert not torch.cuda.is_available()
    torch.accelerator.set_device_index(1)
    assert torch.accelerator.current_device_index() == 1
    assert torch.empty(1, device="tpsim").device == torch.device("tpsim", 1)
    torch.accelerator.set_device_index(0)
    with torch.accelerator.device_index(1):
        assert torch.ones(1, device="tpsim").device.index == 1
    assert torch.accelerator.current_device_index() == 0
    raises(RuntimeError, "Invalid device index", torch.ones, 1, device="tpsim:2")
    x = torch.ones(2, device=DEV)
    assert repr(x) == "tensor([1., 1.], device='tpsim:0')" and x.sum().item() == 2
    assert x.is_tpsim and torch.ones(1).tpsim().is_tpsim
    assert next(nn.Linear(1, 1).tpsim().parameters()).is_tpsim


@check
def check_same_device():
    x, cpu = torch.ones(3, device=DEV), torch.ones(3)
    raises(RuntimeError, f"{SAME}, tpsim:0 and cpu!", torch.add, x, cpu)
    other = torch.ones(3, device="tpsim:1")
    raises(RuntimeError, f"{SAME}, tpsim:0 and tpsim:1!", torch.mul, x, other)
    assert (x + torch.tensor(2.0)).device == x.device  # 0-dim CPU: a scalar
    model = nn.Linear(3, 2).to(DEV)
    raises(RuntimeError, f"{SAME}, tpsim:0 and cpu!", model, torch.randn(4, 3))
    raises(RuntimeError, SAME, nn.Conv2d(1, 1, 1).to(DEV), torch.randn(1, 1, 2, 2))
    raises(RuntimeError, SAME, torch.where, cpu > 0, x, x)
    raises(RuntimeError, SAME, torch.add, x, 1, out=torch.empty(3))
    raises(RuntimeError, SAME, torch.cat, [x, cpu])
    assert x[torch.tensor([0, 2])].device == x.device  # CPU indices, as on CUDA
    gen = torch.Generator()
    text = "'tpsim' device type for generator"
    raises(RuntimeError, text, torch.randn, 2, device=DEV, generator=gen)


@check
def check_operators():
    for t in (torch.zeros(2, device=DEV), torch.eye(2, device=DEV)):
        assert t.device == torch.device("tpsim", 0)
    assert torch.tensor([1, 2], device=DEV).tolist() == [1, 2]
    x = torch.arange(12.0).to(DEV)
    assert x.to("tpsim:1").device.index == 1 and x.to(torch.half).dtype == torch.half
    x.view(3, 4)[0, 0] = 100.0  # views share device memory
    assert x[0].item() == 100 and x.as_strided((2,), (2,)).tolist() == [100, 2]
    assert x.reshape(4, 3).t().contiguous().cpu().equal(x.cpu().reshape(4, 3).t())
    x.view(torch.int32)[1] = 0
    assert x[1].item() == 0 and x.view(3, 4).mT.shape == (4, 3)
    c = torch.randn(3, dtype=torch.cfloat)
    assert c.to(DEV).conj().resolve_conj().cpu().equal(c.conj().resolve_conj())
    y = torch.empty(0, device=DEV).set_(x)
    assert y.data_ptr() == x.data_ptr() and x.unfold(0, 3, 3).shape == (4, 3)
    y.resize_(20)
    assert y.shape == (20,) and y[2].item() == 2
    z = torch.zeros(5, device=DEV)
    z.index_put_((torch.tensor([1, 3]),), torch.tensor(7.0))
    z[z > 5] += 1
    out = torch.empty(5, device=DEV)
    torch.mul(z, 2, out=out)
    assert out.cpu().tolist() == [0, 16, 0, 16, 0]
    assert torch.where(z > 0, z, -1.0).cpu().tolist() == [-1, 8, -1, 8, -1]


@check
def check_layers():
    torch.manual_seed(0)
    same(nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4)), 2, 3, 5, 5)
    same(nn.ConvTranspose2d(4, 2, 3, groups=2), 2, 4, 5, 5)
    same(nn.LSTM(4, 5, num_layers=2, batch_first=True), 2, 3, 4)
    same(nn.GRU(4, 5, bidirectional=True), 3, 2, 4)
    same(nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True), 2, 3, 8)
    q = torch.randn(2, 2, 4, 8)
    on = q.to(DEV)
    attention = F.scaled_dot_product_attention
    close(attention(on, on, on, is_causal=True), attention(q, q, q, is_causal=True))
    norm, twin, batch = nn.BatchNorm1d(3), nn.BatchNorm1d(3).to(DEV), torch.randn(8, 3)
    norm(batch), twin(batch.to(DEV))
    close(twin.running_var, norm.running_var)


@check
def check_training():
    models = [nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))]
    models.append(copy.deepcopy(models[0]).to(DEV))
    data = torch.randn(16, 4)
    for model in models:
        opt = torch.optim.AdamW(model.parameters(), lr=0.1, foreach=True)
        on = next(model.parameters()).device
        for _ in range(3):
            opt.zero_grad()
            model(data.to(on)).pow(2).mean().backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), 0.5, foreach=True)
            opt.step()
        assert norm.device == on
    for a, b in zip(*(m.parameters() for m in models)):
        close(b, a)


@check
def check_generator():
    torch.manual_seed(3)
    a = torch.randn(4, device=DEV).cpu()
    torch.manual_seed(3)
    assert torch.randn(4, device=DEV).cpu().equal(a)
    assert not torch.randn(4).equal(a)  # the device stream is not the CPU's
    state = torch.tpsim.get_rng_state()
    b = torch.rand(3, device=DEV).cpu()
    torch.tpsim.set_rng_state(state)
    assert torch.rand(3, device=DEV).cpu().equal(b)
    gen = torch.Generator(device=DEV)
    assert gen.device == torch.device("tpsim", 0)
    c = torch.randn(3, device=DEV, generator=gen.manual_seed(5)).cpu()
    assert torch.randn(3, device=DEV, generator=gen.manual_seed(5)).cpu().equal(c)
    torch.manual_seed(1)
    drop = F.dropout(torch.ones(1000, device=DEV), 0.5)
    assert drop.device.type == "tpsim" and 300 < int((drop == 0).sum()) < 700
    torch.manual_seed(1)
    assert F.dropout(torch.ones(1000, device=DEV), 0.5).cpu().equal(drop.cpu())
    layer = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5)).to(DEV)
    x = torch.randn(2, 8, device=DEV, requires_grad=True)
    checkpoint(layer, x, use_reentrant=False).sum().backward()  # saves RNG state
    assert layer[0].weight.grad.device.type == "tpsim"


@check
def check_streams_events():
    default, stream = torch.accelerator.current_stream(), torch.Stream(DEV)
    assert stream != default and stream.device == torch.device("tpsim", 0)
    torch.accelerator.set_stream(stream)
    assert torch.accelerator.current_stream() == stream
    torch.accelerator.set_stream(default)
    with stream:
        assert torch.accelerator.current_stream() == stream
    assert torch.accelerator.current_stream() == default
    start = torch.Event(DEV, enable_timing=True)
    end = torch.Event(DEV, enable_timing=True)
    start.record()
    begin = time.perf_counter()
    while time.perf_counter() - begin < 0.01:
        pass
    busy_ms = (time.perf_counter() - begin) * 1000
    end.record()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= busy_ms * 0.99
    other = torch.Stream(DEV)
    other.wait_stream(stream)
    other.wait_event(end)
    stream.synchronize()
    torch.accelerator.synchronize()
    assert stream.query() and isinstance(stream.record_event(), torch.Event)
    untimed = torch.Event(DEV).elapsed_time
    raises(ValueError, "enable_timing=True", untimed, torch.Event(DEV))
    event = torch.Event(DEV)
    event.record(torch.Stream(torch.device("tpsim", 1)))
    raises(
        RuntimeError, "does not match recording stream's device", event.record, stream
    )


@check
def check_memory():
    acc = torch.accelerator
    acc.reset_peak_memory_stats()
    before = acc.memory_allocated()
    block = torch.empty(1 << 20, dtype=torch.uint8, device=DEV)
    assert acc.memory_allocated() - before == 1 << 20
    assert acc.memory_reserved() >= acc.memory_allocated()
    stats = acc.memory_stats()
    assert stats["allocated_bytes.all.current"] == acc.memory_allocated()
    assert stats["allocation.large_pool.current"] >= 1
    del block
    assert acc.memory_allocated() == before and acc.max_memory_allocated() >= 1 << 20
    acc.reset_peak_memory_stats()
    assert acc.max_memory_allocated() == before
    acc.empty_cache()
    free, total = acc.get_memory_info()
    assert 0 < free <= total
    on_one = torch.empty(1000, dtype=torch.uint8, device="tpsim:1")
    assert acc.memory_allocated(1) == 1000 and on_one.device.index == 1
    too_big = dict(dtype=torch.uint8, device=DEV)
    raises(
        torch.OutOfMemoryError, "tpsim out of memory", torch.empty, total + 1, **too_big
    )


class WorkerState:
    """A dataset telling whether a DataLoader worker sees the simulator."""

    def __len__(self):
        return 2

    def __getitem__(self, index):
        return torch.tensor(float(torch.accelerator.current_accelerator() == DEV))


@check
def check_pinned():
    assert torch.randn(3).pin_memory().is_pinned() and not torch.randn(3).is_pinned()
    assert torch.empty(3, pin_memory=True).is_pinned()
    assert torch.ones(2, device=DEV).to("cpu", non_blocking=True).is_pinned()
    data = TensorDataset(torch.randn(8, 3), torch.arange(8))
    for context in (None, "spawn"):
        options = dict(num_workers=2, multiprocessing_context=context)
        for x, y in DataLoader(data, batch_size=4, pin_memory=True, **options):
            assert x.is_pinned() and y.is_pinned()
    options = dict(num_workers=1, multiprocessing_context="spawn")
    assert next(iter(DataLoader(WorkerState(), 2, **options))).tolist() == [1.0, 1.0]


@check
def check_autocast():
    a = torch.randn(4, 4, device=DEV)
    linear, conv = nn.Linear(4, 4).to(DEV), nn.Conv2d(1, 1, 3).to(DEV)
    labels = torch.tensor([0, 1, 2, 3], device=DEV)
    for dtype in (torch.float16, torch.bfloat16):
        with torch.autocast("tpsim", dtype=dtype):
            assert (a @ a).dtype == linear(a).dtype == dtype
            assert conv(torch.randn(1, 1, 4, 4, device=DEV)).dtype == dtype
            assert torch.softmax(a @ a, -1).dtype == torch.float32
            assert F.cross_entropy(a @ a, labels).dtype == torch.float32
    with torch.autocast("tpsim"):  # CUDA's default, unless asked otherwise
        default = os.environ.get("TORCHPORT_SIM_AUTOCAST_DTYPE", "float16")
        assert (a @ a).dtype == getattr(torch, default)
    assert (a @ a).dtype == torch.float32


@check
def check_grad_scaler():
    model = nn.Linear(4, 1).to(DEV)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("tpsim", init_scale=2.0**10)
    for _ in range(3):
        with torch.autocast("tpsim", dtype=torch.float16):
            loss = model(torch.randn(8, 4, device=DEV)).float().pow(2).mean()
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
    assert scaler.get_scale() == 2.0**10
    weight = model.weight.detach().cpu()
    opt.zero_grad()
    scaler.scale(model(torch.full((2, 4), float("inf"), device=DEV)).sum()).backward()
    scaler.step(opt)  # skipped: the gradients are not finite
    scaler.update()
    assert scaler.get_scale() == 2.0**9 and model.weight.detach().cpu().equal(weight)


@check
def check_serialization():
    path = os.path.join(FOLDER[0], "checkpoint.pt")
    linear = nn.Linear(2, 2).to(DEV)
    saved = {"t": torch.arange(6.0, device="tpsim:1"), "m": linear.state_dict()}
    torch.save(saved, path)
    assert torch.load(path)["t"].device == torch.device("tpsim", 1)
    assert torch.load(path, map_location="cpu")["t"].device.type == "cpu"
    for location in ("tpsim", DEV, "tpsim:0"):
        assert torch.load(path, map_location=location)["t"].device.index == 0
    linear.load_state_dict(torch.load(path, map_location="cpu")["m"])
    torch.save(torch.ones(2), path + ".cpu")
    assert torch.load(path + ".cpu", map_location="tpsim").is_tpsim


@check
def check_compile():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(DEV)
    x = torch.randn(3, 4, device=DEV)
    y = torch.compile(model, backend="aot_eager")(x)
    assert y.device.type == "tpsim"
    close(y, model(x).cpu())
    y.sum().backward()
    assert model[0].weight.grad.device.type == "tpsim"


@check
def check_device_module():
    module = torch.get_device_module(DEV)
    assert module is torch.tpsim
    assert {name for name in vars(module) if not name.startswith("__")} == {
        *("is_available", "device_count", "current_device", "set_device"),
        *("_is_in_bad_fork", "_lazy_init", "is_initialized", "device"),
        *("manual_seed", "manual_seed_all", "get_rng_state", "set_rng_state"),
        *("synchronize", "Stream", "Event", "stream"),
        *("current_stream", "default_stream", "set_stream"),
        *("get_device_name", "get_device_properties", "get_amp_supported_dtype"),
    }  # what TorchTPU's torch.tpu has (_selfcheck_ports.check_tpu_module)
    for name in ("memory_allocated", "empty_cache", "is_bf16_supported"):
        text = f"module 'torch.tpsim' has no attribute '{name}'"
        raises(AttributeError, text, getattr, module, name)
    parallel = nn.DataParallel(nn.Linear(2, 2).to(DEV))  # CUDA-only scatter
    raises(Exception, "", parallel, torch.randn(4, 2, device=DEV))


def run_checks(folder: str | None = None) -> dict[str, str | None]:
    """Each check's traceback, or None where it passed."""
    FOLDER[0] = folder or tempfile.mkdtemp()
    results = {}
    for name, function in CHECKS.items():
        try:
            function()
            results[name] = None
        except BaseException:
            results[name] = traceback.format_exc()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codemod.simulate.selfcheck")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    path = Path(args.json).resolve() if args.json else None
    results = run_checks(str(path.parent) if path else None)
    if path:
        path.write_text(json.dumps(results))
    for name, error in results.items():
        print(f"{'ok  ' if error is None else 'FAIL'} {name}")
        if error:
            print(error, file=sys.stderr)
    return 0 if all(error is None for error in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
