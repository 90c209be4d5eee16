"""The module-level device binding.

A module that needs the device gets one binding right after its imports::

    DEVICE = (
        torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")
    )

``plan_binding`` runs before the passes and picks the name they emit: a binding
torchport wrote before (so a second run changes nothing), an unambiguous device
variable of the user's own (which then becomes the binding), or a fresh name that
shadows nothing. ``Insertion`` then says which lines to add, and where, once the
passes have run and it is known whether any of them used the device.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import List, Optional, Sequence

from codemod.names import ModuleFacts
from codemod.passes.base import FileContext
from codemod.rules import TorchVersion

# check_available=True matters: a CUDA wheel on a GPU-less host reports "cuda" otherwise.
BINDING_2_7 = '{torch}.accelerator.current_accelerator(check_available=True) or {torch}.device("cpu")'
BINDING_2_6 = (
    "{torch}.accelerator.current_accelerator() if {torch}.accelerator.is_available()"
    ' else {torch}.device("cpu")'
)


def binding_source(torch_name: str, target: TorchVersion) -> str:
    template = BINDING_2_7 if target >= (2, 7) else BINDING_2_6
    return template.format(torch=torch_name)


def binding_statement(
    context: FileContext, newline: str = "\n", comment: str = ""
) -> str:
    """The binding as torchport writes it: parenthesized, so it fits in 88 columns."""
    value = binding_source(context.torch_name, context.options.target_torch)
    tail = f"  {comment}" if comment else ""
    return f"{context.device_name} = ({newline}    {value}{newline}){tail}{newline}"


def _is_str(node: ast.AST, value: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == value


def _is_available(node: ast.AST, facts: ModuleFacts) -> bool:
    return (
        isinstance(node, ast.Call)
        and facts.qualified_name(node.func) == "torch.cuda.is_available"
    )


def _device_call(node: ast.AST, facts: ModuleFacts, arg_test) -> bool:
    return (
        isinstance(node, ast.Call)
        and facts.qualified_name(node.func) == "torch.device"
        and len(node.args) == 1
        and not node.keywords
        and arg_test(node.args[0])
    )


def is_user_device(value: ast.AST, facts: ModuleFacts) -> bool:
    """``torch.device("cuda" [if torch.cuda.is_available() else "cpu"])`` and the
    ``torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")`` form.
    """
    cuda = lambda a: _is_str(a, "cuda")  # noqa: E731
    cpu = lambda a: _is_str(a, "cpu")  # noqa: E731
    if _device_call(value, facts, cuda):
        return True
    if _device_call(
        value,
        facts,
        lambda a: isinstance(a, ast.IfExp)
        and cuda(a.body)
        and cpu(a.orelse)
        and _is_available(a.test, facts),
    ):
        return True
    return (
        isinstance(value, ast.IfExp)
        and _is_available(value.test, facts)
        and _device_call(value.body, facts, cuda)
        and _device_call(value.orelse, facts, cpu)
    )


def _stores(tree: ast.Module, name: str) -> int:
    count = 0
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and node.id == name
            and not isinstance(node.ctx, ast.Load)
        ):
            count += 1
        elif isinstance(node, ast.arg) and node.arg == name:
            count += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            count += node.name == name
    return count


def is_binding(value: ast.AST, facts: ModuleFacts) -> bool:
    """Either form of the binding torchport writes (see BINDING_2_7, BINDING_2_6)."""
    cpu = lambda a: _is_str(a, "cpu")  # noqa: E731
    current = "torch.accelerator.current_accelerator"
    if (
        isinstance(value, ast.BoolOp)
        and isinstance(value.op, ast.Or)
        and len(value.values) == 2
    ):
        first, second = value.values
        return (
            isinstance(first, ast.Call)
            and facts.qualified_name(first.func) == current
            and not first.args
            and [(k.arg, getattr(k.value, "value", None)) for k in first.keywords]
            == [("check_available", True)]
            and _device_call(second, facts, cpu)
        )
    return (
        isinstance(value, ast.IfExp)
        and isinstance(value.test, ast.Call)
        and facts.qualified_name(value.test.func) == "torch.accelerator.is_available"
        and isinstance(value.body, ast.Call)
        and facts.qualified_name(value.body.func) == current
        and not value.body.args
        and not value.body.keywords
        and _device_call(value.orelse, facts, cpu)
    )


def plan_binding(tree: ast.Module, facts: ModuleFacts, context: FileContext) -> None:
    """Choose the names the passes will emit for torch and the device."""
    context.torch_name = facts.torch_alias or "torch"
    if context.options.device_import and _plan_device_import(tree, facts, context):
        return
    candidates = []
    for index, stmt in enumerate(tree.body):
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            continue
        name = stmt.targets[0].id
        if is_binding(stmt.value, facts):
            context.device_name, context.binding_exists = name, True
            context.binding_line = stmt.lineno
            return
        if is_user_device(stmt.value, facts) and not context.suppressed(
            stmt.lineno, "TP1"
        ):
            candidates.append((index, name))
    for index, name in candidates:
        if _stores(tree, name) == 1:  # bound once in the whole module: unambiguous
            context.device_name, context.binding_index = name, index
            context.binding_line = tree.body[index].lineno
            return
    context.device_name = _fresh_name(context.options.device_name, tree, facts)


def _plan_device_import(
    tree: ast.Module, facts: ModuleFacts, context: FileContext
) -> bool:
    """Use the project's own device (``device-import``) instead of a binding.

    An import the module already has is reused under its name; the imported name
    is aliased when the module uses it for something else. False when the module
    defines that device itself (it is the module the import points at): it then
    gets the usual binding.
    """
    statement = ast.parse(context.options.device_import).body[0]
    source, name = statement.module, statement.names[0].name  # type: ignore[attr-defined]
    bound = _existing_import(tree, source, name)
    if bound is None:
        bound = statement.names[0].asname or name  # type: ignore[attr-defined]
        if bound in facts.identifiers and bound in _names(tree):
            for stmt in tree.body:
                if (
                    isinstance(stmt, ast.Assign)
                    and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)
                    and stmt.targets[0].id == bound
                    and (
                        is_binding(stmt.value, facts)
                        or is_user_device(stmt.value, facts)
                    )
                ):
                    return False
            bound = _fresh_name(bound, tree, facts)
    alias = f" as {bound}" if bound != name else ""
    context.device_name = bound
    context.device_import = f"from {source} import {name}{alias}"
    context.binding_exists = True
    return True


def _existing_import(tree: ast.Module, source: str, name: str) -> Optional[str]:
    """The name a top-level ``from SOURCE import NAME [as X]`` binds, if any."""
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.ImportFrom)
            and stmt.module == source
            and not stmt.level
        ):
            for alias in stmt.names:
                if alias.name == name:
                    return alias.asname or name
    return None


def _fresh_name(preferred: str, tree: ast.Module, facts: ModuleFacts) -> str:
    names = None

    def taken(name: str) -> bool:
        # The word list is cheap but also holds comments; confirm with the tree.
        nonlocal names
        if name not in facts.identifiers:
            return False
        names = names if names is not None else _names(tree)
        return name in names

    for candidate in (preferred, f"ACCELERATOR_{preferred}", f"TORCHPORT_{preferred}"):
        if not taken(candidate):
            return candidate
    n = 2
    while taken(f"{preferred}_{n}"):
        n += 1
    return f"{preferred}_{n}"


def _names(tree: ast.Module) -> set:
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


@dataclass
class Insertion:
    after_line: int  # original line after which ``text`` goes (0: top of file)
    text: str


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def insertions(
    tree: ast.Module,
    lines: Sequence[str],
    context: FileContext,
    first_use: Optional[int],
    newline: str,
) -> List[Insertion]:
    """Lines to add so that every name the passes emitted is defined.

    ``first_use`` is the first line of the first top-level statement that uses the
    device (None if none does): the binding must come before it.
    """
    imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    needed: List[str] = []
    device_import = context.device_import
    if device_import and context.needs_device:
        if context.device_name not in context.facts.imports:
            needed.append(device_import + newline)
    wants_binding = (
        context.needs_device and not context.binding_exists and not device_import
    )
    if (wants_binding or context.needs_torch) and context.facts.torch_alias is None:
        needed.append("import torch" + newline)
    limit = first_use if first_use is not None else len(lines) + 1
    before = [s for s in imports if s.end_lineno < limit]
    if before:
        anchor = before[-1].end_lineno
    else:
        head = tree.body[:1]
        anchor = head[0].end_lineno if head and _is_docstring(head[0]) else 0
    out: List[Insertion] = []
    if needed:
        out.append(Insertion(anchor, "".join(needed)))
    if wants_binding and context.binding_index is None:
        text = binding_statement(context, newline)
        previous = lines[anchor - 1] if anchor else ""
        following = lines[anchor] if anchor < len(lines) else ""
        if anchor and previous.strip():
            text = newline + text
        if following.strip():
            text = text + newline
        out.append(Insertion(anchor, text))
    return out
