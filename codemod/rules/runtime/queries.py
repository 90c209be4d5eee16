"""TP315-TP317: ``torch.cuda`` queries that raise without CUDA, where the port is
exact: in a message, in a capability test, and the bfloat16 check that chooses a
precision, as data (``codemod.rules.runtime`` gathers the family; the queries are
``codemod.catalog.queries``)."""

from __future__ import annotations

from codemod.model.versions import ACCELERATOR_TORCH
from codemod.model.rule import Fix, Rule
from codemod.rules.examples import EXAMPLE_BINDING

RULES = (
    Rule(
        "TP315",
        "cuda-query-in-message",
        "a `torch.cuda` query that raises without CUDA, whose value only goes into "
        "text",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="A query of `codemod.catalog.queries` (`get_device_name`, "
        "`get_device_capability`, `get_device_properties`, `mem_get_info`, "
        "`memory_summary`, the NVML readings, ...) that is an f-string field without "
        "a format spec, a positional argument of `print()`, or an argument a logging "
        "call's message formats with `%s`/`%r`, becomes `<query> if _DEVICE().type == "
        '"cuda" else _DEVICE().type`. The literal text around it is not touched.',
        why="These queries raise on the CPU and on every other accelerator, so a "
        "log line stopped the program there.",
        before=(
            "import torch\n" "\n" 'print(f"running on {torch.cuda.get_device_name(0)}")'
        ),
        after=EXAMPLE_BINDING
        + (
            "print(\n"
            '    f"running on {torch.cuda.get_device_name(0) if _DEVICE().type == '
            "'cuda' else _DEVICE().type}\"\n"
            ")"
        ),
        valid=(
            (
                "def get_device_name(index):\n"
                '    return "gpu"\n'
                "\n"
                "\n"
                'print(f"GPU {get_device_name(0)}")'
            ),
            EXAMPLE_BINDING
            + (
                'print(f"GPU {torch.cuda.get_device_name(0) if _DEVICE().type == '
                "'cuda' else _DEVICE().type}\")"
            ),
        ),
        safety="Safe: on CUDA the query runs as written, at the same moment (the "
        "device test just before it asks nothing more of CUDA than the query does); "
        "elsewhere, where the query raised, the text names the device type. A field "
        "with a format spec (`{x:>10}`) or `=` is not a message field (a string "
        "would not format as the value did, `=` writes the expression): those stay "
        "with their query's rule.",
    ),
    Rule(
        "TP316",
        "cuda-capability-test",
        "a compute-capability test raises without CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="A comparison that reads `torch.cuda.get_device_capability()` (or an "
        "element of it) or `get_device_properties(i).major`/`.minor` becomes "
        '`_DEVICE().type == "cuda" and <comparison>`.',
        why="SM versions are NVIDIA's and reading them raises on every other device. "
        "No accelerator API answers the same question: "
        "`torch.accelerator.get_device_capability()` returns the supported dtypes "
        "and raises on CUDA (codemod/catalog/accelerator.py).",
        before=(
            "import torch\n"
            "\n"
            "if torch.cuda.get_device_capability() >= (8, 0):\n"
            '    print("tensor cores")'
        ),
        after=EXAMPLE_BINDING
        + (
            'if _DEVICE().type == "cuda" and torch.cuda.get_device_capability() >= (8, 0):\n'
            '    print("tensor cores")'
        ),
        valid=(
            (
                "import torch\n"
                "\n"
                "major, minor = torch.cuda.get_device_capability()  # TP903's\n"
                "print(major)"
            ),
        ),
        safety="Safe: on CUDA the comparison's own answer, read as before; "
        "elsewhere, where reading the capability raised, False: the program takes "
        "the branch the test's False gives, whatever it means for that device. "
        "Unpacked or stored capabilities stay reported (TP903).",
    ),
    Rule(
        "TP317",
        "cuda-bf16-check",
        "`torch.cuda.is_bf16_supported()` answers False on every other accelerator",
        Fix.UNSAFE,
        ACCELERATOR_TORCH,  # the device binding's; get_autocast_dtype is 2.4's
        what='Becomes `torch.cuda.is_bf16_supported() if _DEVICE().type == "cuda" else '
        '_DEVICE().type != "cpu" and torch.get_autocast_dtype(_DEVICE().type) == '
        "torch.bfloat16`: CUDA's check on CUDA, the accelerator's own autocast "
        "precision elsewhere.",
        why="A precision choice (`torch.bfloat16 if torch.cuda.is_bf16_supported() "
        "else torch.float16`) sends every other accelerator down CUDA's float16 "
        "path, with a GradScaler, where CUDA itself computes in bfloat16.",
        before=(
            "import torch\n"
            "\n"
            "dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16"
        ),
        after=EXAMPLE_BINDING
        + (
            "dtype = (\n"
            "    torch.bfloat16\n"
            "    if (\n"
            "        torch.cuda.is_bf16_supported()\n"
            '        if _DEVICE().type == "cuda"\n'
            '        else _DEVICE().type != "cpu"\n'
            "        and torch.get_autocast_dtype(_DEVICE().type) == torch.bfloat16\n"
            "    )\n"
            "    else torch.float16\n"
            ")"
        ),
        valid=(
            (
                "import torch\n"
                "\n"
                "dtype = torch.bfloat16 if torch.xpu.is_bf16_supported() else None"
            ),
        ),
        safety="Unsafe: unchanged on CUDA, and False on the CPU as before; on "
        "another accelerator, where the original answered False without raising, "
        "it answers whether that device's autocast computes in bfloat16 (True on "
        "TorchTPU, XLA and HPU, False on MPS and an unconfigured PrivateUse1 "
        "backend), so the program may take CUDA's bfloat16 path there instead of "
        "float16. No form is exact: no accelerator API says whether bfloat16 is "
        'fast (`torch.accelerator.get_device_capability()["supported_dtypes"]`, '
        'torch >= 2.10, says "can allocate").',
    ),
)
