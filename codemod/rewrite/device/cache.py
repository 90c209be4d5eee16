"""How a module-level accessor reaches ``functools``' cache.

The accessor is always cached: it asks for the device once. The decorator reads a
binding of the module's own scope, never a function's (``def g(): import
functools`` binds nothing at module level): the module's ``import functools [as
ft]``, else its ``from functools import cache`` (or ``lru_cache``), provided the name
means that and nothing else at module level and is bound before the accessor is
defined; else torchport adds ``import functools``, under a free alias where the
module binds ``functools`` to something else. Words in comments and strings count
for nothing.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator, Optional, Tuple

from codemod.model.rule import TorchVersion
from codemod.passes.names import ModuleFacts

# functools.cache is Python 3.9+; torch 2.5 was the first to need it.
CACHE_TORCH = (2, 5)
_LRU = "lru_cache(maxsize=None)"
# What torchport writes as the decorator, as ast.unparse reads it back.
WRITTEN = ("cache", _LRU)


@dataclass(frozen=True)
class CacheBinding:
    decorator: str  # the decorator's expression, without the `@`
    import_line: str  # the import torchport adds for it ("" when none)


def cache_binding(
    tree: ast.Module, facts: ModuleFacts, target: TorchVersion, before: int
) -> CacheBinding:
    """The decorator of an accessor defined after line ``before``, and the import
    it needs."""
    wanted = "cache" if target >= CACHE_TORCH else "lru_cache"
    found = {}
    for name, qualified in _imports(tree, before):
        if facts.module_imports.get(name) == {qualified} and (
            name not in facts.module_bound
        ):
            found.setdefault(qualified, name)
    if "functools" in found:
        return CacheBinding(f"{found['functools']}.{_form(wanted)}", "")
    for name in (wanted, "lru_cache"):
        if f"functools.{name}" in found:
            return CacheBinding(_form(name, found[f"functools.{name}"]), "")
    alias = _free_alias(tree, facts)
    line = "import functools" + (f" as {alias}" if alias != "functools" else "")
    return CacheBinding(f"{alias}.{_form(wanted)}", line)


def _form(name: str, bound: Optional[str] = None) -> str:
    call = "(maxsize=None)" if name == "lru_cache" else ""
    return (bound or name) + call


def _imports(tree: ast.Module, before: int) -> Iterator[Tuple[str, str]]:
    """(name, what it imports) of each import among the module's top-level
    statements that ends by line ``before`` (a conditional one may not run)."""
    for stmt in tree.body:
        if (stmt.end_lineno or stmt.lineno) > before:
            break
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    yield alias.asname, alias.name
                else:
                    yield alias.name.split(".")[0], alias.name.split(".")[0]
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            for alias in stmt.names:
                if alias.name != "*":
                    yield alias.asname or alias.name, f"{stmt.module}.{alias.name}"


def _free_alias(tree: ast.Module, facts: ModuleFacts) -> str:
    """``functools`` unless the module's scope binds it to something else; then a
    name no scope of the module uses."""
    bound = facts.module_imports.get("functools", {"functools"})
    if bound == {"functools"} and "functools" not in facts.module_bound:
        return "functools"
    used = {
        node.id if isinstance(node, ast.Name) else node.arg
        for node in ast.walk(tree)
        if isinstance(node, (ast.Name, ast.arg))
    }
    used |= facts.module_imports.keys() | facts.bound | set(facts.imports)
    candidate, n = "_functools", 2
    while candidate in used:
        candidate, n = f"_functools_{n}", n + 1
    return candidate


def is_cache_decorator(decorator: ast.expr) -> bool:
    """A decorator torchport writes on the accessor: ``X.cache``, ``cache``,
    ``X.lru_cache(maxsize=None)``, ``lru_cache(maxsize=None)``."""
    text = ast.unparse(decorator)
    head, _, tail = text.rpartition(".")
    return tail in WRITTEN and (not head or head.isidentifier())
