"""TP1xx: hard-coded CUDA device strings and ``torch.device("cuda")``: the rules, as data (no libcst).

The pass that finds and rewrites their sites is ``codemod.passes.device_strings``.
"""

from __future__ import annotations

from codemod.model.rule import Fix, Rule
from codemod.rules.examples import EXAMPLE_BINDING

RULES = (
    Rule(
        "TP101",
        "cuda-device-object",
        '`torch.device("cuda")` hard-codes the CUDA device',
        Fix.SAFE,
        None,  # the binding alone, which adapts below torch 2.6
        what='Replaces `torch.device("cuda")` (or `type="cuda"`) with the module\'s '
        'device binding, and `torch.device("cuda", i)` (or `index=i`) and '
        '`torch.device("cuda:0")` with `torch.device(_DEVICE().type, i) if '
        '_DEVICE().type != "cpu" else _DEVICE()`: device i of the accelerator, and '
        'without one the CPU itself (not "cpu:0").',
        why="A hard-coded CUDA device fails on a machine without CUDA and never uses "
        "TPU, Trainium, MPS, XPU or NPU.",
        before=("import torch\n" "\n" 'x = torch.zeros(3).to(torch.device("cuda"))'),
        after=EXAMPLE_BINDING + "x = torch.zeros(3).to(_DEVICE())",
        safety="Safe: on a CUDA machine _DEVICE() is `device(type='cuda')`.",
        valid=(
            (
                "import torch\n"
                "\n"
                'cpu = torch.device("cpu")\n'
                "x = torch.zeros(3, device=cpu)"
            ),
        ),
    ),
    Rule(
        "TP102",
        "cuda-device-argument",
        '"cuda" passed as a device argument',
        Fix.SAFE,
        None,  # the binding alone, which adapts below torch 2.6
        what='Rewrites `"cuda"` and `"cuda:N"` passed where PyTorch takes a device: '
        "`.to(...)`, `device=`, `device_type=`, `map_location=`, "
        "`torch.set_default_device(...)`, `torch.autocast(...)`, "
        "`torch.Generator(...)`; and device templates "
        '`"cuda:{}".format(i)` / `"cuda:%d" % i`, which become '
        '`"{}:{}".format(_DEVICE().type, i)` / `"%s:%d" % (_DEVICE().type, i)`. A template '
        "that is only printed or logged is a message: it is reported (TP109), not "
        "rewritten.",
        why="The same call then runs on whatever accelerator is present, or the CPU.",
        before=("import torch\n" "\n" 'y = torch.ones(2, device="cuda")'),
        after=EXAMPLE_BINDING + "y = torch.ones(2, device=_DEVICE())",
        safety="Safe: strings stay strings (`_DEVICE().type`); torch APIs that take a "
        "`torch.device` get `_DEVICE()`.",
        valid=(
            (
                "import torch\n"
                "\n"
                'x = torch.zeros(3).to("cpu")\n'
                'y = torch.ones(2, device="cpu")'
            ),
            ("import logging\n" "\n" 'logging.info("moved the model to cuda")'),
        ),
    ),
    Rule(
        "TP103",
        "cuda-if-available",
        '`"cuda" if torch.cuda.is_available() else "cpu"` picks only CUDA',
        Fix.SAFE,
        None,  # the binding alone, which adapts below torch 2.6
        what='Replaces `"cuda" if torch.cuda.is_available() else "cpu"` with '
        '`_DEVICE().type` (or `_DEVICE()` inside `torch.device(...)`), and the "cuda" of '
        'any other `"cuda" if ... else "cpu"` with `_DEVICE().type`, as it does the '
        '`return "cuda"` of a function that returns other devices\' names too (a '
        "device picker of the program's own), whose availability test is then widened.",
        why="The availability dance only knows CUDA; the binding knows every "
        "accelerator PyTorch knows and falls back to the CPU.",
        before=(
            "import torch\n"
            "\n"
            'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")'
        ),
        after=(
            "import torch\n"
            "\n"
            "device = (\n"
            "    torch.accelerator.current_accelerator()\n"
            "    if torch.accelerator.device_count() > 0\n"
            '    else torch.device("cpu")\n'
            ")"
        ),
        safety="Safe: identical on CUDA and on CPU-only machines.",
        valid=(
            (
                "import torch\n"
                "\n"
                'device = "mps" if torch.backends.mps.is_available() else "cpu"'
            ),
        ),
    ),
    Rule(
        "TP104",
        "cuda-device-comparison",
        'comparison with the "cuda" device string',
        Fix.SAFE,
        None,  # the binding alone, which adapts below torch 2.6
        what='Rewrites `x == "cuda"`, `x != "cuda"`, `"cuda" in x` and `"cuda" not in '
        'x` into tests against the accelerator: `x == _DEVICE().type != "cpu"`. '
        '`case "cuda":` of a `match` on a name or an attribute becomes `case _ if '
        'x == _DEVICE().type != "cpu":` (a pattern cannot call the binding); one '
        "with a guard of its own, or on another subject, is reported (TP109).",
        why="The test means 'is this the accelerator?'. The `!= \"cpu\"` half keeps it "
        "false on a CPU-only machine, as the original was.",
        before=(
            "import torch\n"
            "\n"
            'if device_type == "cuda":\n'
            "    torch.cuda.synchronize()"
        ),
        after=EXAMPLE_BINDING
        + (
            'if device_type == _DEVICE().type != "cpu":\n'
            "    torch.accelerator.synchronize()"
        ),
        safety="Safe: true exactly when the original was on a CUDA machine, and never "
        "true on the CPU.",
        valid=(
            (
                "import torch\n"
                "\n"
                'if args.device == "cpu":\n'
                "    torch.set_num_threads(4)"
            ),
            (
                "import torch\n"
                "\n"
                'if x.device.type == "mps":\n'
                "    torch.mps.synchronize()"
            ),
        ),
    ),
    Rule(
        "TP105",
        "cuda-device-variable",
        '"cuda" assigned to a device variable or default',
        Fix.SAFE,
        None,  # the binding alone, which adapts below torch 2.6
        what='Rewrites `"cuda"` assigned to a name containing "device", used as a '
        "parameter default of such a name, as a `--device` option default, or as the "
        'value of a `"device"` key.',
        why="Configuration that defaults to CUDA crashes on every other machine.",
        before=(
            "import torch\n"
            "\n"
            "\n"
            "def pick(name=None):\n"
            '    device = "cuda"\n'
            "    return torch.device(name or device)"
        ),
        after=EXAMPLE_BINDING
        + (
            "def pick(name=None):\n"
            "    device = _DEVICE().type\n"
            "    return torch.device(name or device)"
        ),
        safety="Safe: the value stays a string; a user can still pass any device.",
        valid=(
            ('cuda_version = "12.1"\n' 'device_name = "cpu"'),
            ('def run(device="cpu"):\n' "    return device"),
        ),
    ),
    Rule(
        "TP109",
        "cuda-string-unknown-context",
        'hard-coded "cuda" string in a position torchport cannot type; '
        "derive it from the device binding (`_DEVICE().type`)",
        Fix.NONE,
        None,
        what='Reports a literal that is exactly "cuda" or "cuda:N" where torchport '
        "cannot tell that it means a device (a list element, a return value, ...).",
        why="Such strings are usually devices, but rewriting without knowing would "
        "change data (dictionary keys, messages).",
        before=("import torch\n" "\n" 'DEVICES = ["cuda", "cpu"]'),
        after='DEVICES = [_DEVICE().type, "cpu"]  # by hand',
        safety="No automatic fix.",
        valid=(
            ('SPEEDUPS = {"cuda": 3.2, "cpu": 1.0}\n' 'print(SPEEDUPS["cuda"])'),
            (
                "import logging\n"
                "\n"
                'logging.warning("cuda is not available, running on the cpu")'
            ),
        ),
    ),
)
