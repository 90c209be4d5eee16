"""Device literals followed to where they are used: ``loc = f"cuda:{rank}"`` read
only as ``torch.load(path, map_location=loc)``.

The device-strings pass types a literal by its position; a variable whose name does
not say "device" hides it. Where a function (or the module) binds such a name once,
to a CUDA device literal, and reads it only in device positions of one kind, the
literal is typed by them: a ``map_location`` must not become "cpu:0"; read by
``.to()`` it stays a string, as written.

Read from the ``ast`` before the passes run: the reads come after the binding, in
statements a chunk need not hold.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Sequence, Set, Tuple

from codemod.catalog.amp import AMP_DEVICE_ARGUMENTS
from codemod.passes.device_positions import Kind
from codemod.passes.names import ModuleFacts, ast_position, scope_nodes

_LITERAL = re.compile(r"cuda(:\d+)?")
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)


def followed_literals(
    tree: ast.Module, facts: ModuleFacts, lines: Sequence[str]
) -> Dict[Tuple[int, int], Kind]:
    """(line, 1-based column) of each followed literal -> the kind its reads take."""
    found: Dict[Tuple[int, int], Kind] = {}
    for scope in ast.walk(tree):
        if isinstance(scope, SCOPES):
            for literal, kind in _in_scope(scope, facts):
                found[ast_position(literal, lines)] = kind
    return found


def _in_scope(scope: ast.AST, facts: ModuleFacts) -> List[Tuple[ast.expr, Kind]]:
    literals: Dict[str, Optional[ast.expr]] = {}  # name -> its literal; None: other
    reads: Dict[str, List[Optional[Kind]]] = {}
    parents: Dict[int, ast.AST] = {}
    if not isinstance(scope, ast.Module):  # a parameter is bound by each call
        arguments = scope.args  # type: ignore[attr-defined]
        for arg in arguments.posonlyargs + arguments.args + arguments.kwonlyargs:
            literals[arg.arg] = None
    nodes = [node for node, _ in scope_nodes(scope)]
    for node in nodes:
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                reads.setdefault(node.id, [])
            elif node.id in literals or not _bound_to_literal(node, parents):
                literals[node.id] = None  # bound twice, or to something else
            else:
                literals[node.id] = parents[id(node)].value  # type: ignore[attr-defined]
    if isinstance(scope, ast.Module):  # a global read by the module's functions
        nodes += _function_reads(scope, literals, parents)
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if literals.get(node.id) is not None:
                reads.setdefault(node.id, [])
                reads[node.id].append(_read_kind(node, parents, facts))
    found = [
        (literal, kinds[0])
        for name, literal in literals.items()
        if literal is not None
        for kinds in [reads.get(name, [])]
        if kinds and kinds[0] is not None and len(set(kinds)) == 1
    ]
    if not isinstance(scope, ast.Module):
        found += _amp_defaults(scope, nodes, parents, facts)
    return found


def _amp_defaults(function, nodes, parents, facts) -> List[Tuple[ast.expr, Kind]]:
    """A parameter's CUDA default (``device_type="cuda"``) that the function only
    reads as an AMP device type, never rebinding it."""
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    pairs = list(
        zip(positional[len(positional) - len(arguments.defaults) :], arguments.defaults)
    )
    pairs += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d]
    found = []
    for arg, default in pairs:
        if not _is_literal(default):
            continue
        kinds = {
            _read_kind(node, parents, facts) if isinstance(node.ctx, ast.Load) else None
            for node in nodes
            if isinstance(node, ast.Name) and node.id == arg.arg
        }
        if kinds == {Kind.AMP}:
            found.append((default, Kind.AMP))
    return found


def _function_reads(module: ast.Module, literals, parents) -> List[ast.AST]:
    """The reads, in the module's functions, of the globals in ``literals``; a global
    some function binds (or names as a parameter) is not followed."""
    found: List[ast.AST] = []
    for function in ast.walk(module):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        arguments = function.args
        own = {a.arg for a in arguments.posonlyargs + arguments.args}
        own |= {a.arg for a in arguments.kwonlyargs}
        own |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
        for node, _ in scope_nodes(function):
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                own.add(node.id)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                own.update(node.names)
            elif isinstance(node, ast.Name):
                found.append(node)
        for name in own & set(literals):
            literals[name] = None
    return found


def _bound_to_literal(name: ast.Name, parents) -> bool:
    assign = parents.get(id(name))
    return (
        isinstance(assign, ast.Assign)
        and assign.targets == [name]
        and _is_literal(assign.value)
    )


def _is_literal(value: ast.expr) -> bool:
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return _LITERAL.fullmatch(value.value) is not None
    if isinstance(value, ast.JoinedStr) and len(value.values) == 2:
        head = value.values[0]
        return isinstance(head, ast.Constant) and head.value == "cuda:"
    return False


def _read_kind(name: ast.Name, parents, facts: ModuleFacts) -> Optional[Kind]:
    """What the literal read as ``name`` becomes there: a map_location of
    torch.load, a string for ``.to()``, an AMP device type; None elsewhere (left to
    its rules)."""
    parent = parents.get(id(name))
    if isinstance(parent, ast.keyword):
        call = parents.get(id(parent))
        if parent.arg == "map_location" and _is_load(call, facts):
            return Kind.LOCATION
        amp = _amp_argument(call, facts)
        return Kind.AMP if amp and parent.arg == amp[1] else None
    if not isinstance(parent, ast.Call):
        return None
    amp = _amp_argument(parent, facts)
    if amp and 0 <= amp[0] < len(parent.args) and parent.args[amp[0]] is name:
        return Kind.AMP  # CUDA's autocast where there is no accelerator
    if len(parent.args) >= 2 and parent.args[1] is name and _is_load(parent, facts):
        return Kind.LOCATION
    if parent.args and parent.args[0] is name:
        is_to = isinstance(parent.func, ast.Attribute) and parent.func.attr == "to"
        return Kind.STRING if is_to else None  # a string stays one, as written
    return None


def _amp_argument(call: Optional[ast.AST], facts: ModuleFacts):
    """(position, keyword) of the device type of a generic AMP callable."""
    if not isinstance(call, ast.Call):
        return None
    return AMP_DEVICE_ARGUMENTS.get(facts.qualified_name(call) or "")


def _is_load(call: Optional[ast.AST], facts: ModuleFacts) -> bool:
    return isinstance(call, ast.Call) and facts.qualified_name(call) == "torch.load"


def device_objects(
    tree: ast.Module, facts: ModuleFacts, lines: Sequence[str]
) -> Set[Tuple[int, int]]:
    """(line, 1-based column) of each read of a name its scope binds once, to a
    ``torch.device(...)`` call: a torch.device there (``.cuda(device)`` is then
    ``.to(device)``, never ``torch.device(type, device)``)."""
    declared = {
        name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Global, ast.Nonlocal))
        for name in node.names
    }
    found: Set[Tuple[int, int]] = set()
    for scope in ast.walk(tree):
        if isinstance(scope, SCOPES):
            for read in _device_reads(scope, facts):
                if read.id not in declared:
                    found.add(ast_position(read, lines))
    return found


def _device_reads(scope: ast.AST, facts: ModuleFacts) -> List[ast.Name]:
    bindings: Dict[str, List[ast.AST]] = {}
    reads: List[ast.Name] = []
    if not isinstance(scope, ast.Module):
        arguments = scope.args  # type: ignore[attr-defined]
        for arg in ast.walk(arguments):
            if isinstance(arg, ast.arg):
                bindings.setdefault(arg.arg, []).append(arg)
    parents: Dict[int, ast.AST] = {}
    for node, _ in scope_nodes(scope):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                reads.append(node)
            else:
                bindings.setdefault(node.id, []).append(parents.get(id(node), node))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bindings.setdefault(node.name, []).append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                bindings.setdefault(name, []).append(node)
    devices = {
        name
        for name, bound in bindings.items()
        if len(bound) == 1 and _makes_device(bound[0], name, facts)
    }
    return [read for read in reads if read.id in devices]


def _makes_device(statement: ast.AST, name: str, facts: ModuleFacts) -> bool:
    """``name = torch.device(...)``."""
    return (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and statement.targets[0].id == name
        and isinstance(statement.value, ast.Call)
        and facts.qualified_name(statement.value.func) == "torch.device"
    )
