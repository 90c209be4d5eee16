"""The rule registry.

Every rule is declared once, as data, next to the pass that implements it
(``codemod/passes/<pass>.py``). Importing :mod:`codemod.passes` fills the registry.
"""

from __future__ import annotations

from typing import Dict

from codemod.model.rule import Rule

# How a documented example's rewrite starts when it needs the device binding: each
# example is a whole program, rewritten by the tests (tests/test_docs.py).
EXAMPLE_BINDING = (
    "import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator("
    'check_available=True) or torch.device("cpu")\n)\n\n'
)

REGISTRY: Dict[str, Rule] = {}


def register(*rules: Rule) -> None:
    for rule in rules:
        if rule.code in REGISTRY:
            raise ValueError(f"rule {rule.code} registered twice")
        REGISTRY[rule.code] = rule


def all_rules() -> Dict[str, Rule]:
    import codemod.run.notebook  # noqa: F401  (registers TP990, skipped notebook cells)
    import codemod.passes  # noqa: F401  (registers every pass's rules)

    return dict(sorted(REGISTRY.items()))
