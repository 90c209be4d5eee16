"""TP308, TP309 and TP318: memory statistics, free memory and the out-of-memory
error of the ``torch.cuda`` runtime API, as data (``codemod.rules.runtime`` gathers
the family)."""

from __future__ import annotations

from codemod.model.rule import Fix, Rule
from codemod.rules.examples import EXAMPLE_BINDING

from codemod.model.versions import (
    MEMORY_INFO_TORCH,
    MEMORY_TORCH,
    OOM_ERROR_TORCH,
)

RULES = (
    Rule(
        "TP308",
        "cuda-memory-stats",
        "`torch.cuda` memory statistics only know CUDA",
        Fix.SAFE,
        MEMORY_TORCH,
        what="`empty_cache`, `memory_allocated`, `max_memory_allocated`, "
        "`memory_reserved`, `max_memory_reserved`, `memory_stats`, "
        "`reset_peak_memory_stats`, `reset_accumulated_memory_stats` (and the old "
        "`*_cached` names) become the `torch.accelerator` functions, behind "
        '`_DEVICE().type != "cpu"`: 0, `{}` or a no-op on the CPU, as torch.cuda was.',
        why="The torch.accelerator memory functions raise without an accelerator.",
        before=(
            "import torch\n"
            "\n"
            "\n"
            "def report():\n"
            "    print(torch.cuda.max_memory_allocated())\n"
            "    torch.cuda.empty_cache()"
        ),
        after=EXAMPLE_BINDING
        + (
            "def report():\n"
            '    print(torch.accelerator.max_memory_allocated() if _DEVICE().type != "cpu" else 0)\n'
            '    if _DEVICE().type != "cpu":\n'
            "        torch.accelerator.empty_cache()"
        ),
        valid=(
            (
                "import torch\n"
                "\n"
                "if torch.backends.mps.is_available():\n"
                "    torch.mps.empty_cache()"
            ),
            ("memory_allocated = 0\n" "print(memory_allocated)"),
        ),
        safety="Safe: the values torch.cuda gave on a machine without a GPU.",
    ),
    Rule(
        "TP309",
        "cuda-mem-get-info",
        "`torch.cuda.mem_get_info()` only knows CUDA",
        Fix.UNSAFE,
        MEMORY_INFO_TORCH,
        what="`torch.cuda.mem_get_info()` becomes `torch.accelerator.get_memory_info()`, "
        "and `(0, 0)` on the CPU.",
        why="Both raise without an accelerator.",
        before=("import torch\n" "\n" "free, total = torch.cuda.mem_get_info()"),
        after=EXAMPLE_BINDING
        + 'free, total = torch.accelerator.get_memory_info() if _DEVICE().type != "cpu" else (0, 0)',
        valid=(
            (
                "def mem_get_info():\n"
                "    return 0, 0\n"
                "\n"
                "\n"
                "free, total = mem_get_info()"
            ),
        ),
        safety="Unsafe: on the CPU the answer is (0, 0); code dividing by the total "
        "needs a look.",
    ),
    Rule(
        "TP318",
        "cuda-out-of-memory-error",
        "`torch.cuda.OutOfMemoryError` names CUDA",
        Fix.SAFE,
        OOM_ERROR_TORCH,
        what="`torch.cuda.OutOfMemoryError` becomes `torch.OutOfMemoryError`.",
        why="It is the same class (torch >= 2.5), under a name that does not suggest "
        "CUDA; the fix is left out for older targets, which lack `torch.OutOfMemoryError`.",
        before=(
            "import torch\n"
            "\n"
            "try:\n"
            "    x = torch.ones(2)\n"
            "except torch.cuda.OutOfMemoryError:\n"
            "    x = None"
        ),
        after=(
            "import torch\n"
            "\n"
            "try:\n"
            "    x = torch.ones(2)\n"
            "except torch.OutOfMemoryError:\n"
            "    x = None"
        ),
        valid=(
            (
                "try:\n"
                "    buffer = bytearray(2**40)\n"
                "except MemoryError:\n"
                "    buffer = None"
            ),
            (
                "class OutOfMemoryError(Exception):\n"
                "    pass\n"
                "\n"
                "\n"
                'raise OutOfMemoryError("no room")'
            ),
        ),
        safety="Safe: `torch.cuda.OutOfMemoryError is torch.OutOfMemoryError`.",
        reads_device=False,
    ),
)
