"""A module moved or cast after an optimizer was made from its parameters (TP205).

``optimizer = SGD(model.parameters())`` then ``model.to(device)``: on CUDA, the CPU,
MPS and XPU, ``Module.to`` swaps each parameter's data in place, so the optimizer
still holds the model's parameters. On a backend whose tensors cannot be swapped
into a parameter in place (c10 lists CPU, CUDA, MPS, HIP, XPU, HPU and MTIA as those
that can; every PrivateUse1 backend, TorchTPU's among them, and XLA cannot),
``Module.to`` makes new parameters: the optimizer steps the old ones and the model
never trains. The same holds for ``.cuda()``, ``.cpu()``, ``.half()`` and the rest.

Reported (no fix: the order is the program's) where an optimizer made from
``M.parameters()`` in a function (or a script) steps after ``M`` is converted there, or where a
function given a module and an optimizer converts the module. Read from the ``ast``:
the optimizer, the move and the use are in different statements.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Sequence, Tuple

from codemod.passes.names import ast_position, dotted_name, scope_nodes

CONVERSIONS = frozenset(
    "to cuda cpu half float double bfloat16 type xpu mps to_empty".split()
)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)
STEPS = ("step", "zero_grad", "param_groups")  # what only an optimizer is used for
OPTIMIZER_NAME = re.compile(r"(?:\w*_)?optim(?:izer)?s?", re.IGNORECASE)
BACKENDS = (
    "on a backend whose tensors cannot be swapped into a parameter in place "
    "(PrivateUse1 backends, TorchTPU's among them; XLA) it makes new parameters and "
    "`{optimizer}` steps the old ones; convert `{module}` before making `{optimizer}`"
)
MADE_HERE = (
    "`{module}.{method}()` after `{optimizer}` (line {line}) was made from "
    "`{module}.parameters()`, and `{optimizer}` steps after it: " + BACKENDS
)
BACKENDS_TIE = (
    "on a backend whose tensors cannot be swapped into a parameter in place "
    "(PrivateUse1 backends, TorchTPU's among them; XLA) it makes a new parameter for "
    "each module, and the two no longer share one; tie them again after the move"
)
HANDED = (
    "`{module}.{method}()` in `{function}`, which line {line} hands "
    "`{optimizer}`, made from `{given}.parameters()`, with `{given}`, and "
    "`{optimizer}` steps after it: " + BACKENDS
)
GIVEN = (
    "`{module}.{method}()` of a module given with `{optimizer}`: if `{optimizer}` was "
    "made from `{module}.parameters()`, then " + BACKENDS
)
Site = Tuple[Tuple[int, int], Tuple[int, int], str]  # start, end, message


def moved_after_optimizer(tree: ast.Module, lines: Sequence[str]) -> List[Site]:
    functions = {
        node.name: node for node in tree.body if isinstance(node, SCOPES)
    }  # what a call in this module may hand a module and its optimizer to
    found: Dict[int, Tuple[ast.Call, str]] = {}
    for scope in ast.walk(tree):
        if isinstance(scope, (*SCOPES, ast.Module)):  # a script trains at the top
            for call, message, handed in _in_function(scope, functions):
                if handed or id(call) not in found:
                    found[id(call)] = (call, message)  # the caller's word first
    sites: List[Site] = []
    for call, message in found.values():
        start, end = ast_position(call, lines), ast_position(call, lines, True)
        sites.append((start, end, message))
    return sorted(sites)


def _in_function(scope, functions) -> List[Tuple[ast.Call, str, bool]]:
    made: Dict[str, Tuple[str, int]] = {}  # optimizer -> (module, line)
    uses: Dict[str, List[Tuple[int, Tuple[ast.AST, ...]]]] = {}
    moves: List[Tuple[ast.Call, str, str, Tuple[ast.AST, ...]]] = []
    aliases: Dict[str, str] = {}  # `o = optimizer` -> optimizer
    calls: List[ast.Call] = []
    for node, loops in scope_nodes(scope, lambdas=False):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            optimizer, module = dotted_name(node.targets[0]), _parameters_of(node.value)
            if optimizer and module:
                made.setdefault(optimizer, (module, node.lineno))
            elif optimizer and isinstance(node.value, (ast.Name, ast.Attribute)):
                aliases.setdefault(optimizer, dotted_name(node.value) or "")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in functions:
                calls.append(node)
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(
            node.ctx, ast.Load
        ):
            name = dotted_name(node)
            if name:
                uses.setdefault(name, []).append((node.lineno, loops))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            module = dotted_name(node.func.value)
            if module and node.func.attr in CONVERSIONS:
                moves.append((node, module, node.func.attr, loops))
    names: Dict[str, List[str]] = {o: [o] for o in made}  # each with its aliases
    for alias, optimizer in aliases.items():
        for _ in range(len(aliases)):  # `o = opt; p = o`
            optimizer = aliases.get(optimizer, optimizer)
        if optimizer in names and alias not in made:
            names[optimizer].append(alias)

    def steps_after(optimizer: str, line: int, loops=()) -> bool:
        return any(
            n > line or set(around) & set(loops)
            for name in names.get(optimizer, [optimizer])
            for use in STEPS
            for n, around in uses.get(f"{name}.{use}", ())
        )

    found: List[Tuple[ast.Call, str, bool]] = []
    given = _given(scope)
    for call, module, method, loops in moves:
        for optimizer, (owner, line) in made.items():
            if owner == module != optimizer and line < call.lineno:
                if steps_after(optimizer, call.lineno, loops):
                    text = MADE_HERE.format(
                        module=module, method=method, optimizer=optimizer, line=line
                    )
                    found.append((call, text, False))
                    break
        else:
            if module in given:
                text = GIVEN.format(
                    module=module, method=method, optimizer=given[module]
                )
                found.append((call, text, False))
    for call in calls:
        for move, text in _handed(call, functions[call.func.id], made, steps_after):
            found.append((move, text, True))
    return found


def _handed(call: ast.Call, function, made, steps_after) -> List[Tuple[ast.Call, str]]:
    """The conversions in ``function`` of the module that ``call`` hands it with
    an optimizer made here from that module's parameters (``prepare(model, opt)``)."""
    arguments = function.args
    parameters = [a.arg for a in arguments.posonlyargs + arguments.args]
    handed = dict(zip(parameters, call.args))
    handed.update((k.arg, k.value) for k in call.keywords if k.arg)
    passed = {p: dotted_name(v) for p, v in handed.items()}
    found: List[Tuple[ast.Call, str]] = []
    for optimizer, (module, line) in made.items():
        if optimizer not in passed.values() or line > call.lineno:
            continue
        inner = {p for p, name in passed.items() if name == module}
        stepped = [p for p, name in passed.items() if name == optimizer]
        if not inner or not (
            steps_after(optimizer, call.lineno)
            or any(n in STEPS for p in stepped for n in _attributes_of(function, p))
        ):
            continue
        for node, _ in scope_nodes(function, lambdas=False):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in CONVERSIONS
                and dotted_name(node.func.value) in inner
            ):
                text = HANDED.format(
                    module=dotted_name(node.func.value),
                    method=node.func.attr,
                    function=function.name,
                    line=call.lineno,
                    optimizer=optimizer,
                    given=module,
                )
                found.append((node, text))
    return found


def _attributes_of(function, name: str) -> List[str]:
    """What ``function`` reads of its parameter ``name`` (``opt.step`` -> step)."""
    return [
        node.attr
        for node, _ in scope_nodes(function, lambdas=False)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == name
    ]


def _given(scope) -> Dict[str, str]:
    """Each other parameter of a function also given an optimizer (a parameter
    named for one) -> that optimizer; empty otherwise."""
    if isinstance(scope, ast.Module):
        return {}
    arguments = scope.args
    names = [
        a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs
    ]
    optimizers = [n for n in names if OPTIMIZER_NAME.fullmatch(n)]
    if not optimizers:
        return {}
    return {n: optimizers[0] for n in names if n not in optimizers + ["self", "cls"]}


def _parameters_of(value: ast.AST) -> str:
    """``M`` when ``value`` is a call given ``M.parameters()`` (or
    ``named_parameters()``), directly or in a list or dict of parameter groups."""
    if not isinstance(value, ast.Call):
        return ""
    for node in ast.walk(value):
        if (
            node is not value
            and isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("parameters", "named_parameters")
        ):
            return dotted_name(node.func.value) or ""
    return ""
