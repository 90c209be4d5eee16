"""The rule registry: every rule, declared once as data in its family's module.

A family module defines ``RULES`` and nothing else runs when it is imported; the
registry below lists the families explicitly. Passes look their rules up here by
code; documentation, configuration and the command line read the same table.
"""

from __future__ import annotations

from typing import Dict, Iterable

from codemod.model.rule import Rule
from codemod.rules import (
    amp,
    backend_flags,
    cuda_only,
    cuda_only_context,
    device_strings,
    distributed,
    notebook,
    runtime,
    tensor_methods,
    tensor_types,
)

FAMILIES = (
    device_strings,
    tensor_methods,
    runtime,
    tensor_types,
    amp,
    distributed,
    backend_flags,
    cuda_only,
    cuda_only_context,
    notebook,
)


def _registry(rules: Iterable[Rule]) -> Dict[str, Rule]:
    found: Dict[str, Rule] = {}
    for rule in rules:
        if rule.code in found:
            raise ValueError(f"rule {rule.code} declared twice")
        found[rule.code] = rule
    return dict(sorted(found.items()))


REGISTRY: Dict[str, Rule] = _registry(r for f in FAMILIES for r in f.RULES)


def all_rules() -> Dict[str, Rule]:
    """Every rule by code, in code order."""
    return dict(REGISTRY)
