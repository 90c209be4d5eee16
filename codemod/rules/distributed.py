"""TP5xx: torch.distributed code that assumes NVIDIA: the "nccl" backend, DDP's
``device_ids`` and ``mp.spawn(nprocs=torch.cuda.device_count())``: the rules, as data (no libcst).

The pass that finds and rewrites their sites is ``codemod.passes.distributed``.
"""

from __future__ import annotations

from codemod.rules.examples import EXAMPLE_ACCESSOR
from codemod.model.rule import Fix, Rule

from codemod.model.versions import DIST_TORCH

RULES = (
    Rule(
        "TP501",
        "nccl-backend",
        '"nccl" hard-codes NVIDIA\'s collective backend; use '
        "`torch.distributed.get_default_backend_for_device(_DEVICE())`",
        Fix.SAFE,
        DIST_TORCH,
        what='Replaces the "nccl" backend of `init_process_group`, `new_group`, '
        "`new_subgroups*`, of any `backend=` keyword, and of a variable, parameter, "
        'command-line option or dict value named like "backend", with '
        "`torch.distributed.get_default_backend_for_device(_DEVICE())`. "
        '`"nccl" if torch.cuda.is_available() else "gloo"` becomes the same call. In '
        'a backend per device (`"cuda:nccl,cpu:gloo"`) the pair "cuda:nccl" becomes '
        "the accelerator's type and default backend; on the CPU, which the string "
        'then names twice, the CPU\'s own pair is left (`"cpu:gloo"`). Another '
        "accelerator's pair beside it is reported (TP503).",
        why='"nccl" exists only in CUDA builds: on the CPU, TPU, Trainium, XPU or NPU '
        "`init_process_group` raises. The device's default backend is nccl on CUDA, "
        "gloo on the CPU and the plugin's own backend elsewhere.",
        before=(
            "import torch.distributed as dist\n"
            "\n"
            "\n"
            "def setup(rank, world_size):\n"
            '    dist.init_process_group("nccl", rank=rank, world_size=world_size)'
        ),
        after=(
            "import functools\n"
            "\n"
            "import torch.distributed as dist\n"
            "import torch\n"
            "\n"
            "\n"
        )
        + EXAMPLE_ACCESSOR
        + (
            "def setup(rank, world_size):\n"
            "    dist.init_process_group(\n"
            "        dist.get_default_backend_for_device(_DEVICE()), rank=rank, world_size=world_size\n"
            "    )"
        ),
        safety='Safe: on a CUDA machine the call returns "nccl" (checked on an H200). '
        "The value stays a string. Needs torch >= 2.6.",
        valid=(
            (
                "import torch.distributed as dist\n"
                "\n"
                'dist.init_process_group(backend="gloo", rank=rank, world_size=world_size)'
            ),
        ),
    ),
    Rule(
        "TP502",
        "nccl-check",
        "the code tests for NCCL, which exists only on NVIDIA GPUs; test the device "
        '(`_DEVICE().type == "cuda"`) or compare with '
        "`torch.distributed.get_default_backend_for_device(_DEVICE())`",
        Fix.NONE,
        None,
        what='Reports `backend == "nccl"` (and `!=`, `in`), `Backend.NCCL` comparisons '
        "and `torch.distributed.is_nccl_available()`.",
        why="What such a test guards is usually NCCL-specific (environment variables, "
        "CUDA streams); on other devices the branch silently stops running. "
        "torch_npu's transfer_to_npu is known to break exactly these checks.",
        before=(
            "import torch\n"
            "\n"
            'if dist.get_backend() == "nccl":\n'
            "    torch.cuda.synchronize()"
        ),
        after='if _DEVICE().type == "cuda":  # by hand, after reading the branch\n'
        "    torch.cuda.synchronize()",
        safety="No automatic fix: whether the branch is about NCCL or about 'the "
        "accelerator' needs a reader.",
        valid=(
            (
                "import torch.distributed as dist\n"
                "\n"
                'if dist.get_backend() == "gloo":\n'
                '    print("CPU collectives")'
            ),
        ),
    ),
    Rule(
        "TP503",
        "nccl-string",
        '"nccl" where torchport cannot tell it is the process-group backend; derive '
        "it with `torch.distributed.get_default_backend_for_device(_DEVICE())`",
        Fix.NONE,
        None,
        what='Reports every other "nccl" (a list element, a return value, '
        '`Backend.NCCL`, a per-device string like "cpu:gloo,cuda:nccl").',
        why="It is almost always a backend choice that fails off NVIDIA GPUs.",
        before=("import torch\n" "\n" 'BACKENDS = ["nccl", "gloo"]'),
        after='BACKENDS = [dist.get_default_backend_for_device(_DEVICE()), "gloo"]'
        "  # by hand",
        safety="No automatic fix.",
        valid=(
            ("import logging\n" "\n" 'logging.info("falling back from nccl to gloo")'),
            ("import os\n" "\n" 'os.environ["NCCL_DEBUG"] = "INFO"'),
        ),
    ),
    Rule(
        "TP504",
        "ddp-device-ids",
        "`DistributedDataParallel(device_ids=...)` raises for a module on the CPU",
        Fix.SAFE,
        None,
        what='Rewrites `device_ids=X` to `device_ids=X if _DEVICE().type != "cpu" else '
        "None` (and `output_device=` the same way), keyword or positional.",
        why="DDP accepts device ids only for modules on an accelerator: a CPU module "
        "with `device_ids=[rank]` raises `ValueError`.",
        before=(
            "from torch.nn.parallel import DistributedDataParallel as DDP\n"
            "\n"
            "\n"
            "def wrap(model, rank):\n"
            "    return DDP(model.cuda(rank), device_ids=[rank])"
        ),
        after=(
            "import functools\n"
            "\n"
            "from torch.nn.parallel import DistributedDataParallel as DDP\n"
            "import torch\n"
            "\n"
            "\n"
        )
        + EXAMPLE_ACCESSOR
        + (
            "def wrap(model, rank):\n"
            "    return DDP(\n"
            "        model.to(torch.device(_DEVICE().type, rank)),\n"
            '        device_ids=[rank] if _DEVICE().type != "cpu" else None,\n'
            "    )"
        ),
        safety="Safe: the argument is unchanged wherever an accelerator exists.",
        valid=(
            (
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                "\n"
                "\n"
                "def wrap(model):\n"
                "    return DDP(model, device_ids=None)"
            ),
        ),
    ),
    Rule(
        "TP505",
        "spawn-device-count",
        "`mp.spawn(nprocs=device_count())` spawns nothing on a machine without GPUs",
        Fix.SAFE,
        None,
        what="Wraps the device count that sets `nprocs` of `torch.multiprocessing.spawn` "
        "/ `start_processes` (directly, through the variable it is assigned to, or in "
        "`args=`) in `max(..., 1)`.",
        why="`device_count()` is 0 on the CPU, and `mp.spawn(fn, nprocs=0)` returns "
        "without running `fn` at all.",
        before=(
            "import torch\n"
            "import torch.multiprocessing as mp\n"
            "\n"
            'if __name__ == "__main__":\n'
            "    world_size = torch.cuda.device_count()\n"
            "    mp.spawn(train, args=(world_size,), nprocs=world_size)"
        ),
        after=(
            "import torch\n"
            "import torch.multiprocessing as mp\n"
            "\n"
            'if __name__ == "__main__":\n'
            "    world_size = max(torch.accelerator.device_count(), 1)\n"
            "    mp.spawn(train, args=(world_size,), nprocs=world_size)"
        ),
        safety="Safe: different only when the count is 0, where nothing ran before.",
        valid=(
            (
                "import os\n"
                "\n"
                "import torch.multiprocessing as mp\n"
                "\n"
                'if __name__ == "__main__":\n'
                '    world_size = int(os.environ["WORLD_SIZE"])\n'
                "    mp.spawn(train, args=(world_size,), nprocs=world_size)"
            ),
        ),
    ),
    Rule(
        "TP506",
        "data-parallel",
        "`nn.DataParallel` scatters with CUDA only",
        Fix.NONE,
        None,
        what="Reports `torch.nn.DataParallel(...)` (and `torch.nn.parallel."
        "data_parallel(...)`) outside a test of `torch.cuda.device_count()` or "
        "`torch.cuda.is_available()`; such a test around it is kept as it is (TP301), "
        "so the model is wrapped on CUDA alone.",
        why="On any other accelerator DataParallel takes every device of it and "
        "scatters the batch with `torch._C._scatter`, which only CUDA builds have: the "
        "forward pass raises. DistributedDataParallel (one process per device, "
        "`dist.get_default_backend_for_device(_DEVICE())`) is the portable form.",
        before=(
            "import torch.nn as nn\n" "\n" "model = nn.DataParallel(nn.Linear(4, 2))"
        ),
        after=(
            "import torch.nn as nn\n" "\n" "model = nn.DataParallel(nn.Linear(4, 2))"
        ),
        safety="No fix: wrapping the model or not changes its type (`model.module`) "
        "and its state-dict keys. Keep it behind `if torch.cuda.device_count() > 1:`, "
        "or move to DistributedDataParallel.",
        valid=(
            (
                "import torch\n"
                "import torch.nn as nn\n"
                "\n"
                "model = nn.Linear(4, 2)\n"
                "if torch.cuda.device_count() > 1:\n"
                "    model = nn.DataParallel(model)"
            ),
        ),
    ),
    Rule(
        "TP507",
        "gloo-device-tensors",
        '`"gloo"` runs collectives of CPU and CUDA tensors only',
        Fix.NONE,
        None,
        what='Reports `"gloo"` as the backend of a process group (`init_process_group`, '
        "`new_group`, a `backend=` keyword or variable) in a module that uses CUDA.",
        why="gloo reduces CPU tensors and CUDA tensors; once the program's tensors are "
        "on another accelerator (TPU, XPU, NPU...), a collective of one raises (`No "
        "backend type associated with device type ...`).",
        before=(
            "import torch\n"
            "import torch.distributed as dist\n"
            "\n"
            'dist.init_process_group("gloo")\n'
            "x = torch.ones(2).cuda()\n"
            "dist.all_reduce(x)"
        ),
        after=(
            "import functools\n"
            "\n"
            "import torch\n"
            "import torch.distributed as dist\n"
            "\n"
            "\n"
        )
        + EXAMPLE_ACCESSOR
        + (
            'dist.init_process_group("gloo")\n'
            "x = torch.ones(2).to(_DEVICE())\n"
            "dist.all_reduce(x)"
        ),
        safety="No fix: CUDA runs gloo as asked, and any backend that serves every "
        "device (`dist.get_default_backend_for_device(_DEVICE())`, nccl on CUDA; or "
        '`f"cpu:gloo,{_DEVICE().type}:..."`) changes that. Choose one by hand where '
        "device tensors meet a collective.",
        valid=(
            (
                "import torch.distributed as dist\n"
                "\n"
                'dist.init_process_group("gloo")'
            ),
        ),
    ),
)
