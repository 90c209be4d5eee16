"""TP3xx, the ``torch.cuda`` runtime API (devices, streams, events, memory, RNG): the
rules as data, one module per topic, and TP390 for the rest of ``torch.cuda``. The
rewrites are ``codemod.passes.runtime``'s; the names each rule covers are the
catalogue's (``codemod.catalog.runtime``).

The torch releases the modules name (``DEVICE_INDEX_TORCH``, ``MEMORY_TORCH``, ...)
are the ones fixes need other than ``torch.accelerator``'s; the catalogue's rows
carry them too, for the names whose fix needs them.
"""

from __future__ import annotations

from codemod.model.rule import Fix, Rule
from codemod.rules.runtime import devices, memory, queries, rng

UNPORTED = Rule(
    "TP390",
    "cuda-api-without-portable-form",
    "this `torch.cuda` API has no portable equivalent",
    Fix.NONE,
    None,
    what="Reports `torch.cuda` names torchport has no portable form for "
    "(`memory_summary`, `get_device_properties`, `initial_seed`, ...), with "
    "advice. (CUDA-only calls made for their effect alone are TP911; a query "
    "whose value only goes into text is TP315.)",
    why="They raise or mean nothing on other devices.",
    before=("import torch\n" "\n" "summary = torch.cuda.memory_summary()"),
    after='if _DEVICE().type == "cuda":  # by hand\n'
    "    summary = torch.cuda.memory_summary()",
    valid=(
        ("def report(cuda):\n" "    print(cuda.memory_summary())"),
        ('cuda_version = "12.1"\n' 'print(f"built for CUDA {cuda_version}")'),
    ),
    safety="No automatic fix.",
)

RULES = tuple(
    sorted(
        (*devices.RULES, *memory.RULES, *queries.RULES, *rng.RULES, UNPORTED),
        key=lambda rule: rule.code,
    )
)
