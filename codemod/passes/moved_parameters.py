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
GIVEN = (
    "`{module}.{method}()` of a module given with `{optimizer}`: if `{optimizer}` was "
    "made from `{module}.parameters()`, then " + BACKENDS
)
Site = Tuple[Tuple[int, int], Tuple[int, int], str]  # start, end, message


def moved_after_optimizer(tree: ast.Module, lines: Sequence[str]) -> List[Site]:
    sites: List[Site] = []
    for scope in ast.walk(tree):
        if isinstance(scope, (*SCOPES, ast.Module)):  # a script trains at the top
            for call, message in _in_function(scope):
                start, end = ast_position(call, lines), ast_position(call, lines, True)
                sites.append((start, end, message))
    return sites


def _in_function(scope) -> List[Tuple[ast.Call, str]]:
    made: Dict[str, Tuple[str, int]] = {}  # optimizer -> (module, line)
    uses: Dict[str, List[Tuple[int, Tuple[ast.AST, ...]]]] = {}
    moves: List[Tuple[ast.Call, str, str, Tuple[ast.AST, ...]]] = []
    for node, loops in scope_nodes(scope, lambdas=False):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            optimizer, module = dotted_name(node.targets[0]), _parameters_of(node.value)
            if optimizer and module:
                made.setdefault(optimizer, (module, node.lineno))
        elif isinstance(node, (ast.Name, ast.Attribute)) and isinstance(
            node.ctx, ast.Load
        ):
            name = dotted_name(node)
            if name:
                uses.setdefault(name, []).append((node.lineno, loops))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            module = dotted_name(node.func.value)
            if module and node.func.attr in CONVERSIONS:
                moves.append((node, module, node.func.attr, loops))
    found: List[Tuple[ast.Call, str]] = []
    given = _given(scope)
    for call, module, method, loops in moves:
        for optimizer, (owner, line) in made.items():
            if owner == module != optimizer and line < call.lineno:
                later = [
                    n
                    for use in STEPS
                    for n, around in uses.get(f"{optimizer}.{use}", ())
                    if n > call.lineno or set(around) & set(loops)
                ]
                if later:
                    text = MADE_HERE.format(
                        module=module, method=method, optimizer=optimizer, line=line
                    )
                    found.append((call, text))
                    break
        else:
            if module in given:
                text = GIVEN.format(
                    module=module, method=method, optimizer=given[module]
                )
                found.append((call, text))
    return found


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
