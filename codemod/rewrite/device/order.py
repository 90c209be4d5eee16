"""Whether the module's own device variable, reused as the binding, is bound before
every statement that will read it.

A chunk after the binding statement is; one in module code before it is not. One in
a function (or a method) defined before it is, unless that function (its class) may
run before the binding: named by module code that runs first, or by a function
that may.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Sequence, Set

from codemod.passes.base import FileContext
from codemod.rewrite.chunks import Chunk


def reuses_user_variable(context: FileContext) -> bool:
    """Whether the plan reads a device variable the module binds itself (its own, or
    one torchport wrote before): it must be bound before every chunk that reads it.
    """
    return not context.device_import and (
        context.binding_index is not None or bool(context.binding_line)
    )


def after_binding(tree: ast.Module, context: FileContext, chunk: Chunk) -> bool:
    """Whether ``chunk`` is in or after the top-level statement that binds the
    module's device variable (chunks come in file order: so are all later ones)."""
    return _top_index(tree, chunk.start) >= _top_index(tree, context.binding_line)


def is_binding_statement(tree: ast.Module, context: FileContext, chunk: Chunk) -> bool:
    """Whether ``chunk`` is the user's statement the plan turns into the binding."""
    if context.binding_index is None:
        return False
    stmt = tree.body[context.binding_index]
    return chunk.start == stmt.lineno and chunk.indent == ""


def bound_before_uses(
    tree: ast.Module, context: FileContext, uses: Sequence[Chunk]
) -> bool:
    """Whether the module's own device variable, reused as the binding, is bound at
    run time before each chunk that now reads it.

    A chunk after the binding statement is; one in module code before it is not.
    One in a function (or a method) defined before it is, unless that function (its
    class) may run before the binding: named by module code that runs first, or by
    a function that may.
    """
    if context.device_import or (
        context.binding_index is None and not context.binding_line
    ):
        return True  # torchport's binding goes before the first use
    index = _top_index(tree, context.binding_line)
    early: Optional[Set[str]] = None
    for chunk in uses:
        where = _top_index(tree, chunk.start)
        if where >= index:
            continue
        if early is None:
            early = _may_run_before(tree, index)
        if not _in_body_not_run(tree.body[where], chunk, early):
            return False
    return True


def _top_index(tree: ast.Module, line: int) -> int:
    for index, stmt in enumerate(tree.body):
        first = min(
            [stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])]
        )
        if first <= line <= stmt.end_lineno:
            return index
    return len(tree.body)


def _inside(function: ast.stmt, chunk: Chunk) -> bool:
    return function.body[0].lineno <= chunk.start and chunk.end <= function.end_lineno


def _in_body_not_run(stmt: ast.stmt, chunk: Chunk, early: Set[str]) -> bool:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _inside(stmt, chunk) and stmt.name not in early
    if isinstance(stmt, ast.ClassDef) and stmt.name not in early:
        return any(
            isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef))
            and _inside(inner, chunk)
            for inner in stmt.body
        )
    return False


def _may_run_before(tree: ast.Module, index: int) -> Set[str]:
    """Names of the module's functions and classes that module code before statement
    ``index`` may call (directly, or through another such function)."""
    definitions = {
        stmt.name: stmt
        for stmt in tree.body
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    named: Set[str] = set()
    for stmt in tree.body[:index]:
        named |= _names_run(stmt)
    reached: Set[str] = set()
    pending = [name for name in named if name in definitions]
    while pending:
        name = pending.pop()
        if name in reached:
            continue
        reached.add(name)
        for node in ast.walk(definitions[name]):
            if isinstance(node, ast.Name) and node.id in definitions:
                pending.append(node.id)
    return reached


def _names_run(stmt: ast.stmt) -> Set[str]:
    """Names read by the code a statement runs when it executes: not the bodies of
    the functions it defines (their decorators and defaults, yes)."""
    found: Set[str] = set()
    stack: List[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend(node.decorator_list)
            stack.extend(node.args.defaults)
            stack.extend(d for d in node.args.kw_defaults if d is not None)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            found.add(node.id)
        stack.extend(ast.iter_child_nodes(node))
    return found
