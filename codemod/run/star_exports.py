"""What a module's ``from helpers import *`` brings, where helpers.py is a file of
the run: the names its ``__all__`` lists, else the public names it binds.

A fresh device accessor must not take the place of such a name
(``codemod.rewrite.device.plan``); one not known here (a module outside the run, an
``__all__`` that is no list of strings) may bring any public name.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import Callable, Dict, Iterator, Optional, Sequence, Set, Tuple

STAR = re.compile(rb"\bimport[ \t]+\*")
Names = Optional[Tuple[str, ...]]
Parse = Callable[[Path], Optional[ast.Module]]


def star_exports(
    tree: ast.Module,
    path: Path,
    index: Dict[str, str],
    run: Dict[str, str],
    parse: Parse,
    cache: Dict[str, Names],
) -> Tuple[Tuple[str, Names], ...]:
    """(".helpers", names) for each star import of ``tree`` whose module is a file
    of the run (``index``: dotted name -> file; ``run``: real path -> file)."""
    found = []
    for node in _module_level(tree.body):
        if not (isinstance(node, ast.ImportFrom) and node.names[0].name == "*"):
            continue
        source = _source(node, path, index, run)
        if source is None:
            continue
        if source not in cache:
            source_tree = parse(Path(source))
            cache[source] = None if source_tree is None else exported(source_tree)
        found.append(("." * node.level + (node.module or ""), cache[source]))
    return tuple(found)


def _source(node: ast.ImportFrom, path: Path, index, run) -> Optional[str]:
    if not node.level:
        return index.get(node.module or "")
    base = Path(os.path.realpath(path)).parent
    for _ in range(node.level - 1):
        base = base.parent
    if node.module:
        base = base.joinpath(*node.module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if str(candidate) in run:
            return run[str(candidate)]
    return None


def exported(tree: ast.Module) -> Names:
    """What ``from module import *`` binds: ``__all__`` when it is a list or tuple
    of strings, else the public names bound at module level; None when not known."""
    listed: Optional[Set[str]] = None
    public: Set[str] = set()
    for stmt in _module_level(tree.body):
        bound = _bound(stmt)
        if bound is None:  # a star import of its own
            public.add("*")
            continue
        if "__all__" in bound or _mentions_all(stmt):
            names = _strings(getattr(stmt, "value", None))
            if names is None or isinstance(stmt, ast.Expr):
                return None
            if isinstance(stmt, ast.AugAssign):
                names |= listed or set()
            listed = names
        public.update(n for n in bound if not n.startswith("_"))
    if listed is not None:
        return tuple(sorted(listed))
    return None if "*" in public else tuple(sorted(public))


def _mentions_all(stmt: ast.stmt) -> bool:
    """``__all__.extend(...)`` and the like: a change torchport does not follow."""
    return isinstance(stmt, ast.Expr) and any(
        isinstance(n, ast.Name) and n.id == "__all__" for n in ast.walk(stmt)
    )


def _strings(value) -> Optional[Set[str]]:
    if not isinstance(value, (ast.List, ast.Tuple)):
        return None
    names = [e.value for e in value.elts if isinstance(e, ast.Constant)]
    if len(names) != len(value.elts) or not all(isinstance(n, str) for n in names):
        return None
    return set(names)


def _bound(stmt: ast.stmt) -> Optional[Set[str]]:
    """The names one module-level statement binds (not those of the statements
    nested in it); None for a star import."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        if stmt.names[0].name == "*":
            return None
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    targets: Sequence[ast.AST] = ()
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _module_level(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run at module level (in ``if`` and ``try`` too)."""
    for stmt in body:
        yield stmt
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                for inner in getattr(stmt, field, None) or ():
                    if isinstance(inner, (ast.ExceptHandler, ast.match_case)):
                        yield from _module_level(inner.body)
                    else:
                        yield from _module_level([inner])
