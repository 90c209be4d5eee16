"""TP2xx: tensor and module methods that name CUDA: ``.cuda()``, ``.is_cuda``,
pinning: the rules, as data (no libcst).

The pass that finds and rewrites their sites is ``codemod.passes.tensor_methods``.
"""

from __future__ import annotations

from codemod.model.rule import Fix, Rule
from codemod.rules.examples import EXAMPLE_BINDING

RULES = (
    Rule(
        "TP201",
        "cuda-method",
        "`.cuda()` moves to CUDA only; use `.to(_DEVICE())`",
        Fix.SAFE,
        None,  # the binding alone, which adapts below torch 2.6
        what="Rewrites `x.cuda()` to `x.to(_DEVICE())`, keeping `non_blocking=` and "
        "`memory_format=`; `x.cuda(i)` becomes `x.to(torch.device(_DEVICE().type, i))`. "
        "A storage (the first parameter of a `map_location=` lambda, or a name that "
        "says `storage`) gets `.to(device=...)`: storage `.to` is keyword-only, and "
        "its `.cuda(0)` means the current device, so it becomes `.to(device=_DEVICE())`.",
        why="`.cuda()` raises on every machine without CUDA.",
        before=(
            "import torch\n"
            "\n"
            "model = Net().cuda()\n"
            "x = x.cuda(non_blocking=True)"
        ),
        after=EXAMPLE_BINDING
        + ("model = Net().to(_DEVICE())\n" "x = x.to(_DEVICE(), non_blocking=True)"),
        safety="Safe for no argument, integer literals, names that say they hold an "
        "index (`rank`, `local_rank`, `args.gpu`, `device_id`), an argparse option "
        "of `type=int`, and a name its function binds once to `torch.device(...)` "
        "(`.cuda(device)` is `.to(device)`). Any other argument is assumed to be an "
        "int (unsafe: were it a torch.device, `torch.device(type, x)` would raise); "
        "`.cuda(x.device)` becomes `.to(x.device)` (unsafe: a None device is no move "
        "for `.to()`, the current device for `.cuda()`). In a module that defines "
        "its own `cuda` method the call is only reported.",
        valid=(
            ("import torch\n" "\n" "if args.cuda:\n" '    print("asked for CUDA")'),
        ),
    ),
    Rule(
        "TP202",
        "is-cuda",
        "`.is_cuda` only knows CUDA",
        Fix.SAFE,
        None,  # the binding alone, which adapts below torch 2.6
        what='Rewrites `x.is_cuda` to `(x.device.type == _DEVICE().type != "cpu")`. As '
        "what an `assert` checks (alone or in an `and` chain), it becomes "
        "`x.device.type == _DEVICE().type`: the tensor is where the program computes. "
        "Inside a branch that runs only with an accelerator (`if torch.cuda."
        "is_available():`) it is `x.device.type == _DEVICE().type`. The test of an "
        "`if` around CUDA-only code (a CUDA-only library, a function of the "
        "program's named for CUDA such as `dtw_cuda(x)`) is kept and reported, and "
        "so is `.is_cuda` in a module that uses `PackedSequence` (which has "
        "`.is_cuda` but no `.device`).",
        why='A plain `x.device.type == _DEVICE().type` would call a CPU tensor "on the '
        'accelerator" on a CPU-only machine; the `!= "cpu"` half keeps it false there. '
        "An assertion checks placement: on the CPU the tensor is where it should be, "
        "and the assertion must hold.",
        before=(
            "import torch\n"
            "\n"
            "\n"
            "def place(x):\n"
            "    if x.is_cuda:\n"
            "        ..."
        ),
        after=EXAMPLE_BINDING
        + (
            "def place(x):\n"
            '    if x.device.type == _DEVICE().type != "cpu":\n'
            "        ..."
        ),
        safety="Safe: the same truth value on CUDA and on CPU-only machines.",
        valid=(
            ("import torch\n" "\n" 'on_accelerator = x.device.type != "cpu"'),
            ("import torch\n" "\n" "if x.is_cpu:\n" "    x = x.numpy()"),
        ),
    ),
    Rule(
        "TP203",
        "pin-memory",
        "`pin_memory()` raises on a machine without an accelerator",
        Fix.SAFE,
        None,  # the binding alone, which adapts below torch 2.6
        what='Rewrites `x.pin_memory()` to `(x.pin_memory() if _DEVICE().type != "cpu" '
        "else x)` and `pin_memory=True` in tensor factories to `pin_memory=_DEVICE().type "
        '!= "cpu"`. A factory pinned at once, `torch.randn(2).pin_memory()`, becomes '
        '`torch.randn(2, pin_memory=_DEVICE().type != "cpu")`; another call pinned as a '
        "whole statement (`return Batch(x).pin_memory()`) is bound to a name first, "
        "so the receiver is written once. In a branch that already needs an "
        "accelerator (`if torch.cuda.is_available():`, a flag that picks the CUDA "
        "device) pinning is left as it is.",
        why="Pinning needs an accelerator: on CPU PyTorch it raises, where a CUDA "
        "program would just have run slower.",
        before=("import torch\n" "\n" "batch = batch.pin_memory()"),
        after=EXAMPLE_BINDING
        + 'batch = batch.pin_memory() if _DEVICE().type != "cpu" else batch',
        safety="Safe: only one branch of the conditional runs, so the receiver is "
        "evaluated once, as before.",
        valid=(
            ("import torch\n" "\n" "buffer = torch.empty(1024, pin_memory=False)"),
            (
                "from torch.utils.data import DataLoader\n"
                "\n"
                "loader = DataLoader(dataset, batch_size=32, pin_memory=True)"
            ),
        ),
    ),
    Rule(
        "TP204",
        "pin-memory-passed-on",
        "`pin_memory=True` passed to a call torchport cannot see into: a DataLoader "
        "pins for the current accelerator (torch >= 2.7) and only warns on the CPU; a "
        "tensor factory "
        "raises there",
        Fix.NONE,
        None,
        what="Reports `pin_memory=True` given to a call that is neither a tensor "
        "factory nor a DataLoader (a project's own dataset or loader class, a loader "
        "picked at run time), informational.",
        why="What it pins is decided inside that call: portable when it reaches a "
        "DataLoader (from torch 2.7 it pins for the current accelerator), raising on "
        "the CPU when it reaches `torch.empty(..., pin_memory=True)`.",
        before=(
            "import torch\n"
            "\n"
            "dataset = ShardedDataset(urls, batch_size=8, pin_memory=True)"
        ),
        after="dataset = ShardedDataset(urls, batch_size=8, pin_memory=True)  # as it is",
        safety="No automatic fix: the flag is passed on, and what it reaches is not "
        "in view.",
        valid=(
            (
                "import torch\n"
                "\n"
                "loader = torch.utils.data.DataLoader(data, pin_memory=True)"
            ),
            ("import torch\n" "\n" "dataset = ShardedDataset(urls, pin_memory=False)"),
        ),
        severity="info",
    ),
    Rule(
        "TP205",
        "parameters-replaced-by-move",
        "a module moved or cast after an optimizer was made from its parameters: on "
        "a backend that cannot swap them in place, the optimizer keeps the old ones",
        Fix.NONE,
        None,
        what="Reports `model.to(...)`, `.cuda()`, `.cpu()`, `.half()` and the other "
        "conversions of a module after an optimizer was made from its `parameters()` "
        "in the same function and stepped after the conversion, and the conversion "
        "of a module in a function that is given an optimizer with it (the "
        "`Trainer(model, optimizer, gpu_id)` of PyTorch's DDP tutorial, or a "
        "`prepare(model, opt)` of the same file), the optimizer stepped under any "
        "name it is bound to. Reports too the move of a module two of whose "
        "modules were given one parameter before it (`self.wte.weight = "
        "self.lm_head.weight` in `__init__`, the class read from any file of the "
        "run), naming the tie: there each module gets a new parameter of its own.",
        why="On CUDA, the CPU, MPS and XPU, `Module.to` swaps each parameter's data "
        "in place. On a backend whose tensors cannot be swapped into a parameter "
        "(every PrivateUse1 backend, TorchTPU's among them; XLA) it makes new "
        "parameters: the optimizer steps the old ones, and the model never trains.",
        before=(
            "import torch\n"
            "\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "model.cuda()\n"
            "optimizer.step()"
        ),
        after="model.to(_DEVICE())\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # by hand\n"
        "optimizer.step()",
        safety="No automatic fix: where the optimizer is made is the program's order.",
        valid=(
            (
                "import torch\n"
                "\n"
                "model.to(device)\n"
                "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "optimizer.step()"
            ),
            (
                "import torch\n"
                "\n"
                "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "optimizer.step()\n"
                "model.to(torch.float16)  # to save it: nothing steps after"
            ),
        ),
    ),
)
