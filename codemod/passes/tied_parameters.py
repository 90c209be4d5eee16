"""A module moved or cast after two of its modules were given one parameter (TP205).

``self.transformer.wte.weight = self.lm_head.weight`` in ``GPT.__init__``, then
``model.to(device)``: where ``Module.to`` swaps each parameter's data in place (CUDA,
the CPU, MPS, XPU) the two modules still share one parameter. On a backend whose
tensors cannot be swapped into a parameter (every PrivateUse1 backend, XLA) it makes
a new parameter for each module that holds one, so the tie is broken: the two
weights train apart, and ``parameters()`` yields both.

The tying classes of the whole run are read before it (``ties_in``, from
``codemod.run.patch_targets``: a class in model.py, moved in train.py) and handed to
each file with its options; a file's own classes are read with it. Reported at the
move of an instance (``model = GPT(...)``, ``GPT.from_pretrained(...)``, then
``model.to()``), and at the move of a module whose attributes a scope ties itself.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, Iterable, List, Mapping, Sequence, Tuple

from codemod.passes.moved_parameters import BACKENDS_TIE, CONVERSIONS, Site, SCOPES
from codemod.passes.names import ast_position, dotted_name, scope_nodes

# What a parameter is called (`self.config.lr = self.args.lr` ties nothing).
PARAMETER = re.compile(r"\w*(?:weight|bias)s?", re.IGNORECASE)
Tie = Tuple[str, str, str, int]  # class, the tie as written, its method, line
TIED_CLASS = (
    "`{module}.{method}()` of a `{cls}`, whose modules share a parameter "
    "(`{tie}` in `{cls}.{function}`, {where}): " + BACKENDS_TIE
)
TIED_HERE = (
    "`{module}.{method}()` after `{tie}` (line {line}) gave two of its modules one "
    "parameter: " + BACKENDS_TIE
)


def _tie(node: ast.AST, root: str) -> str:
    """``a.b.weight = a.c.weight`` as written when both sides are parameters
    (``weight``, ``bias``, ``in_proj_weight``) of attributes of ``root`` (a
    parameter of one submodule handed to another), else ""."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return ""
    target, value = dotted_name(node.targets[0]), dotted_name(node.value)
    if not (target and value) or target == value:
        return ""
    if not isinstance(node.value, ast.Attribute):
        return ""
    for name in (target, value):
        head, *path = name.split(".")
        if head != root or len(path) < 2 or not PARAMETER.fullmatch(path[-1]):
            return ""
    return f"{target} = {value}"


def ties_in(tree: ast.Module) -> List[Tie]:
    """Each class whose methods tie two of its modules' parameters, with the
    first such tie."""
    found: List[Tie] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for method in node.body:
                if not isinstance(method, SCOPES) or not method.args.args:
                    continue
                this = method.args.args[0].arg
                ties = [
                    (stmt.lineno, text)
                    for stmt, _ in scope_nodes(method)
                    for text in [_tie(stmt, this)]
                    if text
                ]
                if ties:
                    line, text = min(ties)
                    found.append((node.name, text, method.name, line))
                    break
    return found


def moved_after_tie(
    tree: ast.Module, lines: Sequence[str], tied: Mapping[str, Tuple[str, str, str]]
) -> List[Site]:
    """Moves of an instance of a tying class (``tied``: class -> (tie, method,
    "path:line")) or
    of a module a scope tied itself."""
    known = _known_names(tree)
    tied = dict(tied)
    own = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    for cls in own:  # a class of this file means its own ties alone
        tied.pop(cls, None)
    tied.update((c, (t, m, f"line {n}")) for c, t, m, n in ties_in(tree))
    sites: List[Site] = []
    for scope in ast.walk(tree):
        if isinstance(scope, (*SCOPES, ast.Module)):
            for call, message in _in_scope(
                scope, tied, {**known, **{c: c for c in own}}
            ):
                start, end = ast_position(call, lines), ast_position(call, lines, True)
                sites.append((start, end, message))
    return sites


def _known_names(tree: ast.Module) -> Dict[str, str]:
    """Each name an import binds here (a class's, or a module's as in
    ``model.GPT``) -> the name it imports."""
    names: Dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                local = alias.asname or alias.name.partition(".")[0]
                names[local] = alias.name.rpartition(".")[2]
    return names


def _made(
    value: ast.AST, tied: Mapping[str, Tuple[str, str, str]], known: Mapping[str, str]
) -> str:
    """The tying class ``value`` makes an instance of (``C(...)``,
    ``C.from_pretrained(...)``, ``mod.C(...)``, ``C`` imported or defined here),
    else ""."""
    if not isinstance(value, ast.Call):
        return ""
    parts = (dotted_name(value.func) or "").split(".")
    if parts[0] not in known:
        return ""
    parts[0] = known[parts[0]]  # `from model import GPT as Model`
    if parts[-1] in tied:
        return parts[-1]
    if len(parts) >= 2 and parts[-2] in tied and parts[-1].startswith("from_"):
        return parts[-2]
    return ""


def _in_scope(
    scope, tied: Mapping[str, Tuple[str, str, str]], known: Mapping[str, str]
) -> Iterable:
    instances: Dict[str, str] = {}  # name -> tying class
    ties: Dict[str, Tuple[str, int]] = {}  # module -> (tie, line)
    moves: List[Tuple[ast.Call, ast.AST, str]] = []
    for node, _ in scope_nodes(scope, lambdas=False):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, cls = dotted_name(node.targets[0]), _made(node.value, tied, known)
            if target and cls:
                instances.setdefault(target, cls)
            root = (dotted_name(node.targets[0]) or "").partition(".")[0]
            text = _tie(node, root) if root else ""
            if text and node.lineno < ties.get(root, ("", node.lineno + 1))[1]:
                ties[root] = (text, node.lineno)  # the first
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in CONVERSIONS:
                moves.append((node, node.func.value, node.func.attr))
    for call, owner, method in sorted(moves, key=lambda m: m[0].lineno):
        module = dotted_name(owner)
        cls = _made(owner, tied, known) or instances.get(module or "", "")
        if cls:
            tie, function, where = tied[cls]
            shown = module or f"{dotted_name(owner.func)}(...)"  # type: ignore
            yield call, TIED_CLASS.format(
                module=shown,
                method=method,
                cls=cls,
                tie=tie,
                function=function,
                where=where,
            )
        elif module in ties and ties[module][1] < call.lineno:
            tie, line = ties[module]
            yield call, TIED_HERE.format(
                module=module, method=method, tie=tie, line=line
            )
