"""What AMP calls do on a CPU host, read from the source (stdlib ``ast`` only).

On a machine without an accelerator, ``torch.autocast("cuda")``, ``torch.cuda.amp.autocast()``
and ``torch.cuda.amp.GradScaler()`` are disabled with a warning: the model computes in
float32.  ``torch.autocast("cpu")`` is not: it computes in bfloat16 (or the dtype given).
A port that turns a CUDA autocast into a CPU one there changes what the program computes.

``cpu_autocasts(source)`` counts the AMP calls of a module whose device type, evaluated as
a CPU-only host would evaluate it, is ``"cpu"`` and that are not written disabled
(``enabled=False``).  The evaluation is symbolic and small: string literals,
``torch.device(...)``, ``.type``, conditional expressions, ``and``/``or``/``not``,
comparisons, the availability queries (False or 0 there), ``current_accelerator()``
(None there), module-level names bound once, and module functions without parameters whose
body is made of ``if``/``return`` (a device accessor).  Anything else is unknown and is
not counted, so the count is a lower bound.
"""

from __future__ import annotations

import ast
from typing import Optional

UNKNOWN = object()

# On a CPU-only host (a CPU build of torch, or a CUDA build without a GPU).
_QUERIES = {
    "torch.cuda.is_available": False,
    "torch.accelerator.is_available": False,
    "torch.backends.mps.is_available": False,
    "torch.cuda.device_count": 0,
    "torch.accelerator.device_count": 0,
    "torch.accelerator.current_accelerator": None,
}
_AUTOCASTS = {
    "torch.autocast",
    "torch.amp.autocast",
    "torch.amp.autocast_mode.autocast",
}
_SCALERS = {
    "torch.amp.GradScaler",
    "torch.GradScaler",
    "torch.amp.grad_scaler.GradScaler",
}
_CUSTOM = {"torch.amp.custom_fwd", "torch.amp.custom_bwd"}
_FIXED = {  # device type fixed by the API itself
    "torch.cuda.amp.autocast": "cuda",
    "torch.cuda.amp.GradScaler": "cuda",
    "torch.cpu.amp.autocast": "cpu",
}


class Device:
    def __init__(self, spec: str):
        self.type = spec.split(":")[0]


def _dotted(node: ast.AST, aliases: dict) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


class _Module:
    def __init__(self, tree: ast.Module):
        self.aliases: dict = {}
        self.bindings: dict = {}
        self.functions: dict = {}
        counts: dict = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                base = (
                    f"{node.module}."
                    if isinstance(node, ast.ImportFrom) and node.module
                    else ""
                )
                for a in node.names:
                    if isinstance(node, ast.Import) and a.asname is None:
                        continue
                    self.aliases[a.asname or a.name] = base + a.name
        for node in tree.body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        counts[target.id] = counts.get(target.id, 0) + 1
                        self.bindings[target.id] = node.value
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                counts[node.name] = counts.get(node.name, 0) + 1
                if not node.args.args and not node.args.kwonlyargs:
                    self.functions[node.name] = node
        for name, n in counts.items():
            if n > 1:  # bound more than once: which value holds is not known
                self.bindings.pop(name, None)
                self.functions.pop(name, None)

    def value(self, node: ast.AST, depth: int = 0):
        if depth > 20:
            return UNKNOWN
        v = lambda n: self.value(n, depth + 1)  # noqa: E731
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.bindings:
                return v(self.bindings[node.id])
            return UNKNOWN
        if isinstance(node, ast.Attribute) and node.attr == "type":
            owner = v(node.value)
            return owner.type if isinstance(owner, Device) else UNKNOWN
        if isinstance(node, ast.IfExp):
            test = v(node.test)
            if test is UNKNOWN:
                return UNKNOWN
            return v(node.body if test else node.orelse)
        if isinstance(node, ast.BoolOp):
            result = UNKNOWN
            for operand in node.values:
                result = v(operand)
                if result is UNKNOWN:
                    return UNKNOWN
                if isinstance(node.op, ast.And) and not result:
                    return result
                if isinstance(node.op, ast.Or) and result:
                    return result
            return result
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            operand = v(node.operand)
            return UNKNOWN if operand is UNKNOWN else not operand
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right = v(node.left), v(node.comparators[0])
            if left is UNKNOWN or right is UNKNOWN:
                return UNKNOWN
            op = type(node.ops[0])
            compare = {
                ast.Eq: lambda a, b: a == b,
                ast.NotEq: lambda a, b: a != b,
                ast.Gt: lambda a, b: a > b,
                ast.GtE: lambda a, b: a >= b,
                ast.Lt: lambda a, b: a < b,
                ast.Is: lambda a, b: a is b,
                ast.IsNot: lambda a, b: a is not b,
            }.get(op)
            try:
                return compare(left, right) if compare else UNKNOWN
            except TypeError:
                return UNKNOWN
        if isinstance(node, ast.Call):
            return self._call(node, v)
        return UNKNOWN

    def _call(self, node: ast.Call, v):
        name = _dotted(node.func, self.aliases)
        if name in _QUERIES:
            return _QUERIES[name]
        if name == "torch.device" and len(node.args) == 1 and not node.keywords:
            spec = v(node.args[0])
            if isinstance(spec, Device):
                return spec
            return Device(spec) if isinstance(spec, str) else UNKNOWN
        if isinstance(node.func, ast.Name) and not node.args and not node.keywords:
            function = self.functions.get(node.func.id)
            if function is not None:
                return self._run(function.body, v)
        return UNKNOWN

    def _run(self, body: list, v):
        for stmt in body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue  # a docstring
            if isinstance(stmt, ast.Return):
                return v(stmt.value) if stmt.value is not None else None
            if isinstance(stmt, ast.If):
                test = v(stmt.test)
                if test is UNKNOWN:
                    return UNKNOWN
                branch = stmt.body if test else stmt.orelse
                result = self._run(branch, v) if branch else _FALLTHROUGH
                if result is not _FALLTHROUGH:
                    return result
                continue
            return UNKNOWN
        return _FALLTHROUGH


_FALLTHROUGH = object()


def _device_type_argument(call: ast.Call, name: str) -> Optional[ast.AST]:
    keyword = "device" if name in _SCALERS else "device_type"
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    if name in _CUSTOM:
        return None
    return call.args[0] if call.args else None


def _disabled(call: ast.Call) -> bool:
    return any(
        kw.arg == "enabled"
        and isinstance(kw.value, ast.Constant)
        and kw.value.value is False
        for kw in call.keywords
    )


def _reached(node: ast.AST, parents: dict, module: "_Module") -> bool:
    """False where a test the CPU-only host evaluates sends control past ``node``:
    the branch of an ``if`` or a conditional expression that is not taken there
    (``nullcontext() if device_type == "cpu" else torch.autocast(device_type)``)."""
    child, parent = node, parents.get(id(node))
    while parent is not None:
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
            test = module.value(parent.test)
            if test is not UNKNOWN:
                body = parent.body if isinstance(parent.body, list) else [parent.body]
                if bool(test) != any(child is b for b in body):
                    return False
        child, parent = parent, parents.get(id(parent))
    return True


def cpu_autocasts(source: str) -> int:
    """AMP calls of ``source`` that run enabled on the CPU on a CPU-only host."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return 0
    module = _Module(tree)
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    count = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _disabled(node):
            continue
        if not _reached(node, parents, module):
            continue
        name = _dotted(node.func, module.aliases)
        if name in _FIXED:
            count += _FIXED[name] == "cpu"
            continue
        if name not in _AUTOCASTS | _SCALERS | _CUSTOM:
            continue
        argument = _device_type_argument(node, name)
        if argument is None:
            continue
        value = module.value(argument)
        if isinstance(value, Device):
            value = value.type
        count += value == "cpu"
    return count
