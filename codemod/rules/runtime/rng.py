"""TP310-TP312: the random number generators of the ``torch.cuda`` runtime API
(seeds, generator state, ``fork_rng``), as data (``codemod.rules.runtime`` gathers
the family)."""

from __future__ import annotations

from codemod.model.versions import ACCELERATOR_TORCH
from codemod.model.rule import Fix, Rule
from codemod.rules.examples import EXAMPLE_BINDING

RULES = (
    Rule(
        "TP310",
        "cuda-manual-seed",
        "`torch.cuda.manual_seed*()` only seeds CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="`torch.cuda.manual_seed(x)` or `manual_seed_all(x)` right after "
        "`torch.manual_seed(x)` (the same `x`, with only seeds between) is removed. "
        "Otherwise `manual_seed_all(x)` becomes `torch.manual_seed(x)` with the CPU "
        "generator's state saved before and set back after, and `manual_seed` (the "
        "current device only), `seed` and `seed_all` are reported: left as they are, "
        "no-ops without CUDA.",
        why="`torch.manual_seed(x)` already seeds every CUDA device with `x`, and every "
        "other backend's devices too (torch.mps and a new backend's module may have no "
        "`manual_seed_all`); alone it would also reseed the CPU generator (changing "
        "shuffling and dropout), hence the state put back. No accelerator API seeds "
        "one device or reseeds one at random (`manual_seed`, `seed`, `seed_all`).",
        before=(
            "import torch\n"
            "\n"
            "\n"
            "def seed_everything(seed):\n"
            "    torch.cuda.manual_seed_all(seed)"
        ),
        after=(
            "import torch\n"
            "\n"
            "\n"
            "def seed_everything(seed):\n"
            "    torch.set_rng_state([torch.get_rng_state(), torch.manual_seed(seed)][0])"
        ),
        valid=(
            ("import torch\n" "\n" "torch.manual_seed(0)"),
            (
                "import torch\n"
                "\n"
                "generator = torch.Generator()\n"
                "generator.manual_seed(0)"
            ),
        ),
        safety="Safe: the same CUDA generator states (a removed seed set them to what "
        "they were; lazily seeded CUDA replays its seeds in call order) and the same "
        "CPU stream; a no-op on the CPU, as before. No device is read.",
    ),
    Rule(
        "TP311",
        "cuda-rng-state",
        "`torch.cuda` RNG state only knows CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="`get_rng_state` and `set_rng_state` go through "
        '`torch.get_device_module(_DEVICE())`, behind `_DEVICE().type != "cpu"` (`None` '
        "or a no-op on the CPU). `get_rng_state_all()` becomes a list of "
        "`get_rng_state(index)` over `torch.accelerator.device_count()` devices (empty "
        "on the CPU), and `set_rng_state_all(states)`, a statement of its own, a loop "
        "of `set_rng_state(state, index)` behind the guard.",
        why="A machine without an accelerator has no accelerator generator to save. "
        "`get_rng_state`/`set_rng_state` are what torch.random.fork_rng and "
        "torch.utils.checkpoint need of every backend's module; the `_all` forms are "
        "not (torch.mps and a new backend's module may lack them).",
        before=(
            "import torch\n" "\n" 'state = {"cuda_rng": torch.cuda.get_rng_state()}'
        ),
        after=EXAMPLE_BINDING
        + (
            "state = {\n"
            '    "cuda_rng": (\n'
            "        torch.get_device_module(_DEVICE()).get_rng_state()\n"
            '        if _DEVICE().type != "cpu"\n'
            "        else None\n"
            "    )\n"
            "}"
        ),
        valid=(
            (
                "import torch\n"
                "\n"
                "state = torch.get_rng_state()\n"
                "torch.set_rng_state(state)"
            ),
        ),
        safety="Safe: on CUDA the `_all` forms are these loops over "
        "`torch.cuda.device_count()` devices, the count torch.accelerator gives; on "
        "the CPU `get_rng_state()` gives None and `set_rng_state` ignores its "
        "argument.",
    ),
    Rule(
        "TP312",
        "fork-rng-devices",
        "`torch.random.fork_rng(devices=...)` forks CUDA generators only",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="Adds `device_type=_DEVICE().type` and makes `devices` empty on the CPU.",
        why="Without `device_type`, fork_rng forks CUDA only; with "
        '`device_type="cpu"` and any device it raises.',
        before=(
            "import torch\n"
            "\n"
            "with torch.random.fork_rng(devices=[0]):\n"
            "    noise = torch.randn(2)"
        ),
        after=EXAMPLE_BINDING
        + (
            "with torch.random.fork_rng(\n"
            '    devices=[0] if _DEVICE().type != "cpu" else [], device_type=_DEVICE().type\n'
            "):\n"
            "    noise = torch.randn(2)"
        ),
        valid=(
            (
                "import torch\n"
                "\n"
                "with torch.random.fork_rng():\n"
                "    noise = torch.randn(2)"
            ),
            (
                "import torch\n"
                "\n"
                "\n"
                "def sample(device_type):\n"
                "    with torch.random.fork_rng(devices=[0], device_type=device_type):\n"
                "        return torch.randn(2)"
            ),
        ),
        safety="Safe: on CUDA the same generators are forked.",
    ),
)
