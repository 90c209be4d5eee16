"""Where torch is bound in a module that can import without it.

A module that imports torch at its top level needs it to import; one that imports
it only in a top-level ``try:`` or ``if`` (``if is_torch_available(): import
torch``, ``if importlib.util.find_spec("torch"):``), or only inside functions,
imports without torch, and must still do so once ported: the device is bound where
torch is (in that block; in each function that imports torch), and a fix that
would read the device on a line that runs without torch is reported instead
(``codemod.passes.device_reads``).
"""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Tuple

from codemod.passes.device_reads import TorchBound

Span = Tuple[int, int]

CONDITIONAL = (
    "; not fixed: torch is imported only in the block at line {line}, and this line"
    " runs without it, where reading the device would raise; move it into that block"
)
IN_FUNCTIONS = (
    "; not fixed: torch is imported only inside functions of this module, and the"
    " device cannot be read here without a module-level `import torch`"
)


def imports_torch(stmt: ast.stmt, name: str = "torch") -> bool:
    """``import torch`` (``import torch as NAME`` for another ``name``; never
    ``import torch.nn``)."""
    return isinstance(stmt, ast.Import) and any(
        alias.name == "torch" and (alias.asname or "torch") == name
        for alias in stmt.names
    )


def _requires_torch(tree: ast.Module) -> bool:
    """An import of torch, or of part of it, among the top-level statements."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            if any(a.name.split(".")[0] == "torch" for a in stmt.names):
                return True
        elif isinstance(stmt, ast.ImportFrom) and not stmt.level:
            if (stmt.module or "").split(".")[0] == "torch":
                return True
    return False


def _is_type_checking(test: ast.expr) -> bool:
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
    return name == "TYPE_CHECKING"


def _branches(stmt: ast.stmt) -> Iterator[List[ast.stmt]]:
    """The blocks of a top-level ``try`` or ``if`` that may bind torch for the
    module: the ``try`` body; each branch of an ``if`` chain (not one that runs
    only for type checkers)."""
    if isinstance(stmt, ast.Try):
        yield stmt.body
    while isinstance(stmt, ast.If):
        if not _is_type_checking(stmt.test):
            yield stmt.body
        rest = stmt.orelse
        if len(rest) == 1 and isinstance(rest[0], ast.If):
            stmt = rest[0]
            continue
        if rest:
            yield rest
        break


def optional_torch_import(tree: ast.Module) -> Optional[ast.stmt]:
    """The ``import torch`` of a top-level ``try:`` or ``if`` block (torch is
    optional), if no top-level statement imports torch or part of it."""
    if _requires_torch(tree):
        return None
    for stmt in tree.body:
        for block in _branches(stmt):
            for inner in block:
                if imports_torch(inner):
                    return inner
    return None


def last_import(tree: ast.Module, optional: ast.stmt) -> ast.stmt:
    """The last of the imports that follow ``optional`` in its block, without
    other statements between (``optional`` itself if none): the binding follows
    them."""
    branch = optional_branch(tree, optional)
    last = optional
    for stmt in branch[branch.index(optional) + 1 :]:
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            break
        last = stmt
    return last


def optional_block(tree: ast.Module, optional: ast.stmt) -> Optional[ast.stmt]:
    """The top-level statement whose block holds ``optional``."""
    for stmt in tree.body:
        if any(optional in block for block in _branches(stmt)):
            return stmt
    return None


def optional_branch(tree: ast.Module, optional: ast.stmt) -> List[ast.stmt]:
    """The block that holds ``optional`` (the statements of that ``try`` or ``if``
    branch)."""
    block = optional_block(tree, optional)
    return next((b for b in _branches(block) if optional in b), []) if block else []


def functions(tree: ast.Module):
    """Top-level functions and the methods of top-level classes."""
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield stmt
        elif isinstance(stmt, ast.ClassDef):
            for inner in stmt.body:
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield inner


def torch_import_of(stmt: ast.stmt, name: str = "torch") -> Optional[ast.stmt]:
    """``stmt`` if it imports torch (as ``name``); the ``import torch`` of a
    ``try:`` it is (torch optional in that function: ``except ImportError:
    return``)."""
    if imports_torch(stmt, name):
        return stmt
    if isinstance(stmt, ast.Try):
        return next((s for s in stmt.body if imports_torch(s, name)), None)
    return None


def _function_imports(tree: ast.Module) -> List[Tuple[ast.stmt, ast.Import, str]]:
    """(function, its first statement importing torch, the name it binds) of each
    function of ``functions`` that has one in its body (in a ``try:`` too)."""
    found = []
    for function in functions(tree):
        for stmt in function.body:
            inner = stmt.body if isinstance(stmt, ast.Try) else [stmt]
            names = [
                alias.asname or "torch"
                for s in inner
                if isinstance(s, ast.Import)
                for alias in s.names
                if alias.name == "torch"
            ]
            if names:
                found.append(
                    (
                        function,
                        next(s for s in inner if imports_torch(s, names[0])),
                        names[0],
                    )
                )
                break
    return found


def lazy_torch_name(tree: ast.Module) -> Optional[str]:
    """The name torch is bound to in the functions that import it, in a module
    that imports it nowhere else (``torch`` if one binds that, else the name most
    of them bind); None if none does."""
    if _requires_torch(tree) or optional_torch_import(tree) is not None:
        return None
    names = [name for _, _, name in _function_imports(tree)]
    if not names:
        return None
    return "torch" if "torch" in names else max(names, key=names.count)


def torch_bound(tree: ast.Module) -> Optional[TorchBound]:
    """The lines where torch is bound when they run, in a module that can import
    without it; None where torch is bound everywhere (the module imports it), or
    nowhere (it imports no torch: a binding needs ``import torch`` added)."""
    optional = optional_torch_import(tree)
    if optional is not None:
        return _conditional(tree, optional)
    name = lazy_torch_name(tree)
    if name is None:
        return None
    spans = [
        (stmt.end_lineno + 1, function.end_lineno)
        for function, stmt, bound in _function_imports(tree)
        if bound == name
    ]
    return TorchBound(spans, IN_FUNCTIONS)


def _conditional(tree: ast.Module, optional: ast.stmt) -> TorchBound:
    """Torch bound by ``optional`` in a block: the rest of that block (and a
    ``try``'s ``else``), the bodies of functions (they run when called, once torch
    is there; not those defined where it is not), a ``__main__`` block, and the
    blocks of other ``if`` statements with the same test."""
    block = optional_block(tree, optional)
    branch = next(b for b in _branches(block) if optional in b)
    spans: List[Span] = [(optional.end_lineno + 1, branch[-1].end_lineno)]
    if isinstance(block, ast.Try) and block.orelse:
        spans.append(_lines(block.orelse))
    others = [_lines(b) for b in _branches(block) if b is not branch]
    others += [_lines(h.body) for h in getattr(block, "handlers", [])]
    test = ast.unparse(block.test) if isinstance(block, ast.If) else None
    for stmt in tree.body:
        if _is_main(stmt) or (
            test is not None
            and stmt is not block
            and isinstance(stmt, ast.If)
            and ast.unparse(stmt.test) == test
        ):
            spans.append(_lines(stmt.body))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not any(a <= node.lineno <= b for a, b in others):
                spans.append((node.body[0].lineno, node.end_lineno))
    return TorchBound(spans, CONDITIONAL.format(line=optional.lineno), True)


def _lines(block: List[ast.stmt]) -> Span:
    first = block[0]
    decorators = [d.lineno for d in getattr(first, "decorator_list", [])]
    return min([first.lineno] + decorators), block[-1].end_lineno


def _is_main(stmt: ast.stmt) -> bool:
    test = getattr(stmt, "test", None)
    return (
        isinstance(stmt, ast.If)
        and isinstance(test, ast.Compare)
        and ast.unparse(test).replace("'", '"') == '__name__ == "__main__"'
    )
