"""A fresh name for the device binding: one the module binds and reads nowhere, and
that no star import of the module may bring (``from helpers import *``: the names
the run read of helpers, ``Options.star_exports``; any public name where it read
none). The default name has a leading underscore, which ``from module import *``
never exports.
"""

from __future__ import annotations

import ast
from typing import Iterator, Sequence

from codemod.passes.base import FileContext
from codemod.passes.names import ModuleFacts


def fresh_name(preferred: str, tree: ast.Module, facts: ModuleFacts, brought=()) -> str:
    """``preferred``, else a variant, that the module binds and reads nowhere and
    that no star import of it may bring (``brought``, see ``star_brought``)."""
    names = None

    def taken(name: str) -> bool:
        if name in brought:
            return True
        # The word list is cheap but also holds comments; confirm with the tree.
        nonlocal names
        if name not in facts.identifiers:
            return False
        names = names if names is not None else module_names(tree)
        return name in names

    if None in brought and not preferred.startswith("_"):
        preferred = (
            "_" + preferred
        )  # a star import of an unread module: any public name
    stem = preferred.lstrip("_")
    lead = preferred[: len(preferred) - len(stem)]
    for candidate in (
        preferred,
        f"{lead}ACCELERATOR_{stem}",
        f"{lead}TORCHPORT_{stem}",
    ):
        if not taken(candidate):
            return candidate
    n = 2
    while taken(f"{preferred}_{n}"):
        n += 1
    return f"{preferred}_{n}"


def star_brought(tree: ast.Module, context: FileContext) -> set:
    """The names this module's star imports may bring: those the run read of their
    modules (``Options.star_exports``), and None for one the run did not read."""
    read = dict(context.options.star_exports)
    brought: set = set()
    for node in _module_level(tree.body):
        if isinstance(node, ast.ImportFrom) and node.names[0].name == "*":
            names = read.get("." * node.level + (node.module or ""))
            brought.update(names if names is not None else (None,))
    return brought


def _module_level(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run at module level (in ``if`` and ``try`` too), where a star
    import may be."""
    for stmt in body:
        yield stmt
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                yield from _module_level(getattr(stmt, field, None) or ())


def module_names(tree: ast.Module) -> set:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.alias):
            found.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            found.update(node.names)
    return found
