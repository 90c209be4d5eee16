"""TP313: the legacy ``torch.cuda.*Tensor`` types: the rules, as data (no libcst).

The pass that finds and rewrites their sites is ``codemod.passes.tensor_types``.
"""

from __future__ import annotations

from codemod.model.versions import ACCELERATOR_TORCH
from codemod.model.rule import Fix, Rule
from codemod.rules.examples import EXAMPLE_BINDING

RULES = (
    Rule(
        "TP313",
        "cuda-tensor-type",
        "legacy `torch.cuda.*Tensor` types only know CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="`torch.cuda.FloatTensor([1, 2])` becomes `torch.tensor([1, 2], "
        "dtype=torch.float32, device=_DEVICE())` and `torch.cuda.FloatTensor(2, 3)` "
        "`torch.empty(2, 3, dtype=torch.float32, device=_DEVICE())`; "
        '`x.type(torch.cuda.FloatTensor)` (or `x.type("torch.cuda.FloatTensor")`) '
        "becomes `x.to(_DEVICE(), torch.float32)`; `isinstance(x, torch.cuda."
        "FloatTensor)` becomes `(isinstance(x, torch.Tensor) and x.dtype == "
        'torch.float32 and x.device.type == _DEVICE().type != "cpu")`; '
        "`torch.set_default_tensor_type(torch.cuda.HalfTensor)` as a statement is "
        'kept for CUDA behind `if _DEVICE().type == "cuda":`, with `else:` '
        "`torch.set_default_dtype(torch.float16)` and "
        "`torch.set_default_device(_DEVICE())`. Other uses (as a value, with arguments "
        "that may be data or sizes, an integer default type) are reported.",
        why="The legacy constructors exist only for CUDA.",
        before=(
            "import torch\n"
            "\n"
            "mask = torch.cuda.BoolTensor([True, False])\n"
            "half = mask.type(torch.cuda.HalfTensor)"
        ),
        after=EXAMPLE_BINDING
        + (
            "mask = torch.tensor([True, False], dtype=torch.bool, device=_DEVICE())\n"
            "half = mask.to(_DEVICE(), torch.float16)"
        ),
        safety="Safe for list or tuple literals and integer sizes, for `.type()` of "
        "a tensor and for `isinstance` of a name. `.type()` of a tensor already on a "
        "CUDA device other than the current one keeps it there, where `.to(_DEVICE())` "
        "moves it to the current device (one GPU per process is unaffected). A "
        "receiver named like a module is reported: `nn.Module.type()` also casts "
        "integer buffers, which `.to()` leaves. `set_default_tensor_type` is unchanged "
        "on CUDA; elsewhere factory functions and modules make tensors of its dtype on "
        "`_DEVICE()`, but the legacy `torch.Tensor(...)` constructor ignores the default "
        "device (CPU tensors on an accelerator other than CUDA), and a later "
        "`set_default_tensor_type(torch.FloatTensor)` resets the dtype but not the "
        "device.",
        valid=(
            (
                "import torch\n"
                "\n"
                "x = torch.FloatTensor([1, 2])\n"
                "if isinstance(x, torch.FloatTensor):\n"
                "    x = x.type(torch.DoubleTensor)"
            ),
        ),
    ),
)
