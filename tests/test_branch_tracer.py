"""The branch tracer (tests/branch_tracer.py): which sites it finds, and that a traced
program behaves as the program does, counters aside. On the CPU: no simulator needed."""

from __future__ import annotations

import re
import textwrap

import pytest

from tests import branch_tracer
from tests.branch_tracer import ACCELERATOR, CUDA_BINDING, CUDA_ONLY
from tests.fixture_cases import FIXTURES

EVERY_FORM = """\
import argparse
import torch as th
import torch.distributed as dist
from torch import accelerator

device = (
    th.accelerator.current_accelerator(check_available=True) or th.device("cpu")
)
OLD = th.device("cuda" if th.cuda.is_available() else "cpu")
x = th.ones(2).to(device)
y = x.to(device=device, non_blocking=True)
if device.type != "cpu":
    th.get_device_module(device).synchronize()
if device.type == "cpu":
    pass
else:
    z = 1
n = th.accelerator.device_count() if device.type != "cpu" else 0
pin = th.empty(1, pin_memory=device.type != "cpu")
if device.type == "cuda":
    th.cuda.nvtx.range_push("x")
if not accelerator.is_available():
    pass
stream = th.Stream(device=device)
event = th.Event()
name = th.get_device_module(device).get_device_name
state = th.load("f", map_location=device)
with th.autocast(device.type):
    pass
backend = dist.get_default_backend_for_device(device)
argparse.ArgumentParser().add_argument("--device", default=device.type)
print(device, OLD.type != "cpu", x.new_zeros(1, device=OLD))
"""


def _kinds(source: str):
    return [(s.kind, s.category) for s in branch_tracer.sites(source)]


def test_every_form_of_site_is_found_with_its_kind():
    assert sorted(_kinds(EVERY_FORM)) == sorted(
        [
            ("torch.accelerator.current_accelerator()", ACCELERATOR),
            (".to(DEVICE)", ACCELERATOR),
            (".to(DEVICE)", ACCELERATOR),
            ('if DEVICE.type != "cpu": <body>', ACCELERATOR),
            ("torch.get_device_module(DEVICE).synchronize()", ACCELERATOR),
            ('if DEVICE.type == "cpu": ... else: <body>', ACCELERATOR),
            ("torch.accelerator.device_count()", ACCELERATOR),
            ('<X> if DEVICE.type != "cpu" else Y', ACCELERATOR),
            ('DEVICE.type != "cpu" (value on an accelerator)', ACCELERATOR),
            ('if DEVICE.type == "cuda": <body>', CUDA_ONLY),
            ("torch.accelerator.is_available()", ACCELERATOR),
            (
                "not torch.accelerator.is_available() (value on an accelerator)",
                ACCELERATOR,
            ),
            ("torch.Stream()", ACCELERATOR),
            ("torch.Event()", ACCELERATOR),
            ("torch.get_device_module(DEVICE).get_device_name", ACCELERATOR),
            ("map_location=DEVICE", ACCELERATOR),
            ("torch.autocast(DEVICE.type)", ACCELERATOR),
            (
                "torch.distributed.get_default_backend_for_device(DEVICE)",
                ACCELERATOR,
            ),
            ('DEVICE.type != "cpu" (value on an accelerator)', CUDA_BINDING),
            ("device=DEVICE", CUDA_BINDING),
        ]
    )


ACCESSOR = """\
import functools

import torch


@functools.lru_cache(maxsize=None)
def DEVICE():
    return torch.accelerator.current_accelerator(check_available=True) or torch.device(
        "cpu"
    )


_CACHED = None


def device():
    global _CACHED
    if _CACHED is None:
        _CACHED = (
            torch.accelerator.current_accelerator(check_available=True)
            or torch.device("cpu")
        )
    return _CACHED


def DEVICE_OF(x):
    return torch.accelerator.current_accelerator() or torch.device("cpu")


LAZY = lambda: torch.accelerator.current_accelerator() or torch.device("cpu")


@functools.cache
def WRITTEN():
    if torch.accelerator.device_count() > 0:
        return torch.accelerator.current_accelerator()
    return torch.device("cpu")


a = torch.ones(1).to(DEVICE())
if DEVICE().type != "cpu":
    pass
b = torch.ones(1).to(device())
c = torch.ones(1).to(DEVICE)
d = torch.ones(1).to(DEVICE_OF(a))
e = torch.ones(1, device=LAZY())
f = torch.ones(1).to(WRITTEN())
"""


def test_a_binding_may_be_a_function_returning_the_device():
    kinds = [k for k, _ in _kinds(ACCESSOR) if "torch.accelerator." not in k]
    assert kinds == [
        ".to(DEVICE)",
        'if DEVICE.type != "cpu": <body>',
        ".to(DEVICE)",
        "device=DEVICE",
        ".to(DEVICE)",  # the accessor torchport writes
    ]


def _write(folder, name, text):
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


BEHAVES = """\
import sys

import torch

DEVICE = (
    torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")
)
order = []


def note(value):
    order.append(value)
    return value


class Model(torch.nn.Module):
    where = "accelerator" if DEVICE.type != "cpu" else "host"

    @torch.amp.custom_fwd(device_type=DEVICE.type)
    def forward(self, x):
        return x * 2


def placed(n):
    return [note(torch.full((1,), float(i)).to(DEVICE).item()) for i in range(n)]


def lazy():
    yield torch.ones(1).to(DEVICE)
    yield torch.zeros(1).to(DEVICE)


@torch.compile(backend="eager")
def compiled(x):
    if DEVICE.type != "cpu":
        x = x + 1
    return x.to(DEVICE) * 2


print(Model.where, Model()(torch.ones(2)).tolist(), len(placed(3)), order)
print(f"{'on ' + DEVICE.type if DEVICE.type != 'cpu' else 'host'}", sum(lazy()).item())
print(compiled(torch.ones(2)).tolist(), sorted(k for k in globals() if "torch" in k))
print(__name__, __file__ == sys.argv[0], sys.argv[1:])
torch.ones(1).to(DEVICE).view(2)  # raises, with the program's own line numbers
"""


def test_a_traced_program_behaves_as_the_program(tmp_path, program_runner):
    program = _write(tmp_path, "behaves.py", BEHAVES)
    argv = [str(program), "--flag"]
    plain = program_runner.run(program, tmp_path, argv)
    traced = program_runner.run(program, tmp_path, argv, trace=True)
    assert plain.returncode == traced.returncode == 1
    assert traced.stdout == plain.stdout
    assert "host [2.0, 2.0] 3 [0.0, 1.0, 2.0]" in plain.stdout
    assert "__main__ True ['--flag']" in plain.stdout

    def frames(stderr):
        return re.findall(r'File "[^"]*behaves.py", line (\d+), in (\S+)', stderr)

    assert frames(traced.stderr) == frames(plain.stderr) != []
    assert traced.stderr.splitlines()[-1] == plain.stderr.splitlines()[-1]
    counts = {}
    for site in branch_tracer.sites(program.read_bytes()):
        counts.setdefault(site.kind, []).append(traced.hits.get(site.index, 0))
    assert plain.hits is None
    assert counts == {
        "torch.accelerator.current_accelerator()": [1],
        '<X> if DEVICE.type != "cpu" else Y': [0, 0],
        "device_type=DEVICE.type": [1],
        ".to(DEVICE)": [3, 1, 1, 1, 1],
        'if DEVICE.type != "cpu": <body>': [0],
    }


SPAWNS = """\
import torch
import torch.multiprocessing as mp

DEVICE = (
    torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")
)


def worker(rank):
    print(rank, torch.ones(1).to(DEVICE).item() + rank, flush=True)


if __name__ == "__main__":
    mp.spawn(worker, nprocs=2, join=True)
    print("done", torch.zeros(1).to(DEVICE).item())
"""


def test_the_children_a_program_spawns_are_traced(tmp_path, program_runner):
    program = _write(tmp_path, "spawns.py", SPAWNS)
    proc = program_runner.run(program, tmp_path, trace=True)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.splitlines()) == ["0 1.0", "1 2.0", "done 0.0"]
    to = [s.index for s in branch_tracer.sites(program.read_bytes()) if "to(" in s.kind]
    assert [proc.hits.get(i, 0) for i in to] == [2, 1]


@pytest.mark.parametrize(
    "after",
    sorted(FIXTURES.rglob("*.after.py")),
    ids=lambda p: p.relative_to(FIXTURES).as_posix(),
)
def test_every_after_file_can_be_traced(after):
    source = after.read_bytes()
    sites = branch_tracer.sites(source)
    branch_tracer.compile_traced(source, str(after))
    assert [s.index for s in sites] == list(range(len(sites)))
    if b"current_accelerator(" in source:
        assert any("current_accelerator" in s.kind for s in sites)
