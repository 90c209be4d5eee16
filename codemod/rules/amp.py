"""TP4xx: mixed precision written against ``torch.cuda.amp`` (and the deprecated
``torch.cpu.amp``): the rules, as data (no libcst).

The pass that finds and rewrites their sites is ``codemod.passes.amp``.
"""

from __future__ import annotations

from codemod.model.versions import ACCELERATOR_TORCH
from codemod.model.rule import Fix, Rule
from codemod.rules.examples import EXAMPLE_BINDING

RULES = (
    Rule(
        "TP401",
        "cuda-amp-autocast",
        "`torch.cuda.amp.autocast` only knows CUDA; use `torch.autocast` with the "
        "accelerator's type",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="Rewrites `torch.cuda.amp.autocast(...)` (also imported as `autocast`, "
        "through `from torch.cuda import amp`, or used as a decorator) to "
        '`torch.autocast(_DEVICE().type if _DEVICE().type != "cpu" else "cuda", ...)`: '
        "the accelerator's autocast, and without an accelerator CUDA's, disabled as "
        "the original was. A decorator, evaluated at import, gets "
        '`(torch.accelerator.current_accelerator() or torch.device("cuda")).type`. '
        "Positional arguments become keywords: the old order is (enabled, dtype, "
        "cache_enabled), the new one (device_type, dtype, enabled, cache_enabled). "
        'A `"cuda"` given to `torch.autocast` itself gets the same device type.',
        why="`torch.cuda.amp.autocast` enables autocast on CUDA only: elsewhere it "
        "warns and does nothing. It is deprecated since torch 2.4.",
        before=(
            "import torch\n"
            "\n"
            "with torch.cuda.amp.autocast(use_amp):\n"
            "    loss = model(x)"
        ),
        after=EXAMPLE_BINDING
        + (
            "with torch.autocast(\n"
            '    _DEVICE().type if _DEVICE().type != "cpu" else "cuda", enabled=use_amp\n'
            "):\n"
            "    loss = model(x)"
        ),
        safety='Safe: on CUDA the device type is "cuda", and `torch.autocast("cuda")` '
        "defaults to float16 like `torch.cuda.amp.autocast`. On a host without an "
        'accelerator it is "cuda" too: autocast is disabled with the same warning and '
        "the model computes in float32 as before (the CPU's autocast would compute "
        "in bfloat16). Other accelerators autocast with their own default dtype "
        "(bfloat16 on TPU). `current_accelerator()` asks the build, not the device: "
        'it initialises nothing, and a CUDA build says "cuda" with or without a GPU.',
        valid=(
            (
                "import torch\n"
                "\n"
                'with torch.amp.autocast("cpu"):\n'
                "    loss = model(x)"
            ),
            (
                "import torch\n"
                "\n"
                'with torch.autocast("cpu", dtype=torch.bfloat16):\n'
                "    loss = model(x)"
            ),
        ),
    ),
    Rule(
        "TP402",
        "cuda-amp-grad-scaler",
        "`torch.cuda.amp.GradScaler` only knows CUDA; "
        "use `torch.amp.GradScaler` with the accelerator's type",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="Rewrites `torch.cuda.amp.GradScaler(...)` to "
        '`torch.amp.GradScaler(_DEVICE().type if _DEVICE().type != "cpu" else "cuda", '
        "...)`: the accelerator's scaler, and without an accelerator CUDA's, disabled "
        "as the original was. The device goes first, so every positional argument "
        "keeps its meaning: `GradScaler(2.**16)` never becomes a scaler for device "
        "65536.0.",
        why="Without CUDA the CUDA scaler disables itself with a warning. "
        "`torch.amp.GradScaler` (torch 2.3) scales on the device the program runs "
        "on; the device binding needs torch 2.6.",
        before=("import torch\n" "\n" "scaler = torch.cuda.amp.GradScaler(2.0**10)"),
        after=EXAMPLE_BINDING
        + (
            "scaler = torch.amp.GradScaler(\n"
            '    _DEVICE().type if _DEVICE().type != "cpu" else "cuda", 2.0**10\n'
            ")"
        ),
        safety="Safe: on CUDA it is the same scaler with the same settings; on a host "
        "without an accelerator it disables itself as the original did (a CPU scaler "
        "would be enabled).",
        valid=(
            ("import torch\n" "\n" 'scaler = torch.amp.GradScaler("cpu", 2.0**10)'),
        ),
    ),
    Rule(
        "TP403",
        "cuda-amp-custom-function",
        "`torch.cuda.amp.custom_fwd`/`custom_bwd` only know CUDA; use "
        "`torch.amp.custom_fwd(device_type=...)` with the accelerator's type",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="Rewrites `@torch.cuda.amp.custom_fwd`, `@torch.cuda.amp.custom_fwd("
        "cast_inputs=...)` and `@torch.cuda.amp.custom_bwd` to the `torch.amp` "
        "decorators (torch 2.4) with `device_type=` the type of the accelerator this "
        "build of torch has, else CUDA's as the original: "
        '`(torch.accelerator.current_accelerator() or torch.device("cuda")).type` '
        '(below torch 2.7, `_DEVICE().type if _DEVICE().type != "cpu" else "cuda"`).',
        why="The CUDA decorators follow CUDA autocast only, and are deprecated since "
        "torch 2.4. `torch.amp.custom_fwd` needs its `device_type` keyword.",
        before=(
            "import torch\n"
            "\n"
            "@staticmethod\n"
            "@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)\n"
            "def forward(ctx, x):\n"
            "    ..."
        ),
        after=(
            "import torch\n"
            "\n"
            "@staticmethod\n"
            "@torch.amp.custom_fwd(\n"
            '    device_type=(torch.accelerator.current_accelerator() or torch.device("cuda")).type,\n'
            "    cast_inputs=torch.float32,\n"
            ")\n"
            "def forward(ctx, x):\n"
            "    ..."
        ),
        safety="Safe: decorators run at import time, where asking for a device would "
        "initialise CUDA before the program does; `current_accelerator()` without "
        '`check_available` asks the build, not the device, and a CUDA build says "cuda". '
        "The decorator only selects whose autocast state applies, so a CUDA build "
        "without a GPU, or a build without an accelerator, behaves as the original did "
        "there (a caller's CPU autocast does not apply). Below torch 2.7 the fix reads "
        "`_DEVICE()` at import, and is then unsafe.",
        valid=(
            (
                "import torch\n"
                "\n"
                "\n"
                "class Scale(torch.autograd.Function):\n"
                "    @staticmethod\n"
                '    @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)\n'
                "    def forward(ctx, x):\n"
                "        return x * 2"
            ),
        ),
    ),
    Rule(
        "TP404",
        "autocast-gpu-state",
        "`torch.get_autocast_gpu_dtype()`, `torch.is_autocast_enabled()` and their "
        "setters ask about CUDA only; pass the device type",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="Rewrites `torch.get_autocast_gpu_dtype()` to "
        "`torch.get_autocast_dtype(T)`, a `torch.is_autocast_enabled()` "
        "without arguments to `torch.is_autocast_enabled(T)`, and the "
        "setters alike: `torch.set_autocast_gpu_dtype(dtype)` to "
        "`torch.set_autocast_dtype(T, dtype)` and a one-argument "
        "`torch.set_autocast_enabled(flag)` to "
        "`torch.set_autocast_enabled(T, flag)` (torch 2.4), so that off "
        "CUDA the getters read what the setters set. `T` is "
        '`_DEVICE().type if _DEVICE().type != "cpu" else "cuda"`: the accelerator\'s '
        "type, and without an accelerator CUDA's, as the original asked.",
        why="Without arguments both ask about CUDA autocast (deprecated since torch "
        "2.4), which is never on elsewhere.",
        before=(
            "import torch\n"
            "\n"
            "\n"
            "def cast(x):\n"
            "    if torch.is_autocast_enabled():\n"
            "        x = x.to(torch.get_autocast_gpu_dtype())\n"
            "    return x"
        ),
        after=EXAMPLE_BINDING
        + (
            "def cast(x):\n"
            '    if torch.is_autocast_enabled(_DEVICE().type if _DEVICE().type != "cpu" else "cuda"):\n'
            "        x = x.to(\n"
            "            torch.get_autocast_dtype(\n"
            '                _DEVICE().type if _DEVICE().type != "cpu" else "cuda"\n'
            "            )\n"
            "        )\n"
            "    return x"
        ),
        safety="Safe: on CUDA the answers are the same, and on a host without an "
        "accelerator too (CUDA's autocast state, not the CPU's).",
        valid=(
            (
                "import torch\n"
                "\n"
                'if torch.is_autocast_enabled("cpu"):\n'
                '    x = x.to(torch.get_autocast_dtype("cpu"))'
            ),
        ),
    ),
    Rule(
        "TP405",
        "cpu-amp-autocast",
        '`torch.cpu.amp.autocast` is deprecated; use `torch.autocast("cpu")`',
        Fix.SAFE,
        None,
        what='Rewrites `torch.cpu.amp.autocast(...)` to `torch.autocast("cpu", ...)`, '
        "positional arguments as keywords.",
        why="`torch.cpu.amp.autocast` is deprecated since torch 2.4.",
        before=(
            "import torch\n" "\n" "with torch.cpu.amp.autocast():\n" "    y = model(x)"
        ),
        after=(
            "import torch\n" "\n" 'with torch.autocast("cpu"):\n' "    y = model(x)"
        ),
        safety="Safe: the same CPU autocast, with the same defaults.",
        valid=(
            ("import torch\n" "\n" 'with torch.autocast("cpu"):\n' "    y = model(x)"),
        ),
        reads_device=False,
    ),
    Rule(
        "TP406",
        "cpu-amp-grad-scaler",
        '`torch.cpu.amp.GradScaler` is deprecated; use `torch.amp.GradScaler("cpu")`',
        Fix.SAFE,
        (2, 3),
        what='Rewrites `torch.cpu.amp.GradScaler(...)` to `torch.amp.GradScaler("cpu", '
        "...)`, the device first so positional arguments keep their meaning.",
        why="`torch.cpu.amp.GradScaler` is deprecated since torch 2.4.",
        before=("import torch\n" "\n" "scaler = torch.cpu.amp.GradScaler()"),
        after=("import torch\n" "\n" 'scaler = torch.amp.GradScaler("cpu")'),
        safety="Safe: the same CPU scaler.",
        valid=(("import torch\n" "\n" 'scaler = torch.amp.GradScaler("cpu")'),),
        reads_device=False,
    ),
    Rule(
        "TP407",
        "grad-scaler-default-device",
        "`torch.amp.GradScaler()` without a device scales for CUDA; "
        "pass the accelerator's type",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what='Adds `_DEVICE().type if _DEVICE().type != "cpu" else "cuda"` as the first '
        "argument of a `torch.amp.GradScaler` (or `torch.GradScaler`) given no device: "
        "the accelerator's type, and without an accelerator CUDA's, as before.",
        why='The device parameter defaults to "cuda": without CUDA the scaler '
        "disables itself with a warning.",
        before=(
            "import torch\n" "\n" "scaler = torch.amp.GradScaler(init_scale=1024.0)"
        ),
        after=EXAMPLE_BINDING
        + (
            "scaler = torch.amp.GradScaler(\n"
            '    _DEVICE().type if _DEVICE().type != "cpu" else "cuda", init_scale=1024.0\n'
            ")"
        ),
        safety="Safe: on CUDA it is the same scaler; on a host without an accelerator "
        "it disables itself as before (a CPU scaler would be enabled).",
        valid=(
            (
                "import torch\n"
                "\n"
                'scaler = torch.amp.GradScaler(device="cpu", init_scale=1024.0)'
            ),
        ),
    ),
    Rule(
        "TP409",
        "cuda-amp-by-hand",
        "`torch.cuda.amp` used in a way torchport cannot rewrite; "
        "use `torch.autocast`/`torch.amp` with `_DEVICE().type`",
        Fix.NONE,
        None,
        what="Reports `torch.cuda.amp` names that are not simply called: passed around, "
        "subclassed, called with `*args`, or not mapped at all.",
        why="Their meaning depends on how they are used later, so no rewrite is sure "
        "to keep it.",
        before=("import torch\n" "\n" "scaler_class = torch.cuda.amp.GradScaler"),
        after="scaler_class = functools.partial(torch.amp.GradScaler, _DEVICE().type)",
        safety="No automatic fix.",
        valid=(
            (
                "import functools\n"
                "\n"
                "import torch\n"
                "\n"
                'cpu_autocast = functools.partial(torch.autocast, "cpu")\n'
                "scaler_class = torch.amp.GradScaler"
            ),
        ),
        reads_device=False,
    ),
)
