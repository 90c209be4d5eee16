"""Counting, on a run, the accelerator branches an after file holds.

On the CPU, ``DEVICE`` is the CPU, so the code torchport writes for an accelerator
never runs there. This module finds that code in a program's AST (the *sites*), gives
each site a *kind*, and runs an instrumented copy of the program that counts how often
each site was reached; tests/test_simulated_runs.py runs every after file so on the
simulated accelerator and fails on a kind that no run reached.

**The binding.** A name assigned ``torch.accelerator.current_accelerator(...) or
torch.device("cpu")`` (or the ``current_accelerator() if torch.accelerator.is_available()
else torch.device("cpu")`` written for torch 2.6), whatever it is called and in whatever
scope; or a function without parameters (or a lambda) that returns that value
(directly, or through such a name), whose uses are ``DEVICE()``. A name assigned
``torch.device("cuda" if torch.cuda.is_available() else "cpu")`` (the binding kept for a
torch older than ``torch.accelerator``) is a CUDA binding: on any other accelerator it is
the CPU. ``torch`` is found through the module's imports (``import torch as th``).

**The kinds** (``DEVICE`` stands for the binding, ``A`` for any other operand):

- a guard: a comparison of ``DEVICE.type`` (``DEVICE.type != "cpu"``,
  ``A == DEVICE.type != "cpu"``, ``DEVICE.type == "cpu"``, ``DEVICE.type in A``...), or
  ``torch.accelerator.is_available()`` as a test, either under ``not``. As the test of an
  ``if`` statement, the kind is the branch taken on an accelerator (``if G: <body>``, or
  ``if G: ... else: <body>``); as the test of a conditional expression, the value taken
  there (``<X> if G else Y``); anywhere else (a keyword value, an operand of ``and``), the
  guard itself, counted when it evaluates as it does on an accelerator
  (``G (value on an accelerator)``). That side is True, except for an equality with
  ``"cpu"``, and flips under ``not``;
- ``torch.get_device_module(DEVICE).NAME()``, one kind per NAME (``...NAME`` when read
  without a call, ``torch.get_device_module(DEVICE)`` when used whole);
- ``torch.accelerator.NAME()``, one kind per NAME;
- ``torch.Stream()`` and ``torch.Event()``;
- ``.to(DEVICE)``;
- ``KEYWORD=DEVICE`` and ``KEYWORD=DEVICE.type`` keyword arguments of any call
  (``device=DEVICE``, ``map_location=DEVICE``, ``device_type=DEVICE.type``);
- ``CALLEE(DEVICE)`` and ``CALLEE(DEVICE.type)`` for a torch callee given the binding as a
  positional argument (``torch.autocast(DEVICE.type)``, ``torch.amp.GradScaler(...)``,
  ``torch.distributed.get_default_backend_for_device(DEVICE)``).

A call counts once it has returned, so a call that raises (a device module without the
member) is not counted. A site is *CUDA-only* when its guard compares with a vendor's
name (``DEVICE.type == "cuda"``): on any other accelerator it is never reached. A site on
a CUDA binding is the CPU's there. Both are counted apart and not required.

**Instrumentation.** The program's AST gets a counter at each site: a call
``__torchport_hit__(i)`` as the first statement of a branch, ``__torchport_hit__(i, X)``
around an expression (it returns ``X``), ``__torchport_hit_if__(i, X, side)`` around a
guard value. Each new node carries the position of the code it wraps, so tracebacks name
the program's own lines; the counters are builtins, so the program's namespace is its
own. The copy is compiled with the program's file name and run as ``runpy.run_path``
runs it. Each traced process writes ``hits-<pid>.json`` (site index -> count) into a
folder when it exits; a forked child starts from zero; a program started as
``python branch_tracer.py --hits DIR PROGRAM ARGS...`` has its ``mp.spawn`` children
traced too (they import an instrumented ``__mp_main__``). A forked DataLoader worker
leaves with ``os._exit`` and writes nothing: what it reached is not counted.
"""

from __future__ import annotations

import ast
import atexit
import builtins
import json
import os
import sys
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

MODULE = "_torchport_branch_tracer"  # the name this file is loaded under in programs
HIT, HIT_IF = "__torchport_hit__", "__torchport_hit_if__"
ACCELERATOR, CUDA = "accelerator", "cuda"  # the kinds of binding
# The categories of site: only ACCELERATOR sites must be reached on an accelerator.
CUDA_ONLY, CUDA_BINDING = "cuda-only", "cuda-binding"
NAME = "DEVICE"  # every binding is written so in a kind
# Keywords that place work on a device whatever the callee (x.new_zeros(device=...)).
PLACING_KEYWORDS = ("device", "device_type", "map_location")


@dataclass(frozen=True)
class Site:
    index: int
    kind: str
    line: int
    category: str  # ACCELERATOR, CUDA_ONLY or CUDA_BINDING


# -- what the program imports and binds ------------------------------------------------
def _torch_names(tree: ast.AST) -> Dict[str, str]:
    """Local names bound to torch or to something of torch, as dotted paths."""
    names: Dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "torch" or alias.name.startswith("torch."):
                    if alias.asname:
                        names[alias.asname] = alias.name
                    else:
                        names["torch"] = "torch"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "torch" or node.module.startswith("torch."):
                for alias in node.names:
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


class _Program:
    def __init__(self, tree: ast.Module):
        self.torch = _torch_names(tree)
        self.variables: Dict[str, str] = {}  # name -> ACCELERATOR or CUDA
        self.functions: Dict[str, str] = {}
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets = [node.target]
            value = getattr(node, "value", None)
            kind = self._binding_value(value)
            accessor = isinstance(value, ast.Lambda) and not _has_parameters(value)
            function_kind = self._binding_value(value.body) if accessor else None
            for target in targets:
                if kind and isinstance(target, ast.Name):
                    self.variables[target.id] = kind
                if function_kind and isinstance(target, ast.Name):
                    self.functions[target.id] = function_kind
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                kind = self._accessor(node)
                if kind:
                    self.functions[node.name] = kind

    def dotted(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Name):
            return self.torch.get(node.id)
        if isinstance(node, ast.Attribute):
            owner = self.dotted(node.value)
            return f"{owner}.{node.attr}" if owner else None
        return None

    def _calls(self, node, dotted: str) -> bool:
        return isinstance(node, ast.Call) and self.dotted(node.func) == dotted

    def _cpu_device(self, node) -> bool:
        return (
            self._calls(node, "torch.device")
            and len(node.args) == 1
            and _is_string(node.args[0], "cpu")
        )

    def _binding_value(self, node) -> Optional[str]:
        current = "torch.accelerator.current_accelerator"
        if (
            isinstance(node, ast.BoolOp)
            and isinstance(node.op, ast.Or)
            and len(node.values) == 2
            and self._calls(node.values[0], current)
            and self._cpu_device(node.values[1])
        ):
            return ACCELERATOR
        if isinstance(node, ast.IfExp) and self._cpu_device(node.orelse):
            if self._calls(node.test, "torch.accelerator.is_available"):
                return ACCELERATOR if self._calls(node.body, current) else None
        if self._calls(node, "torch.device") and len(node.args) == 1:
            test = node.args[0]
            if (
                isinstance(test, ast.IfExp)
                and self._calls(test.test, "torch.cuda.is_available")
                and _is_string(test.body, "cuda")
                and _is_string(test.orelse, "cpu")
            ):
                return CUDA
        return None

    def _accessor(self, function) -> Optional[str]:
        if _has_parameters(function):
            return None
        returns = [n.value for n in ast.walk(function) if isinstance(n, ast.Return)]
        current = "torch.accelerator.current_accelerator"
        if any(self._calls(v, current) for v in returns) and any(
            self._cpu_device(v) for v in returns
        ):  # if torch.accelerator.device_count() > 0: return current_accelerator()
            return ACCELERATOR
        for node in ast.walk(function):
            if isinstance(node, ast.Return) and node.value is not None:
                kind = self._binding_value(node.value)
                if kind is None and isinstance(node.value, ast.Name):
                    kind = self.variables.get(node.value.id)
                if kind:
                    return kind
        return None

    def use(self, node) -> Optional[str]:
        """The binding's kind where ``node`` reads it (``DEVICE`` or ``DEVICE()``)."""
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            return self.variables.get(node.id)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and not node.args
            and not node.keywords
        ):
            return self.functions.get(node.func.id)
        return None

    def type_use(self, node) -> Optional[str]:
        if isinstance(node, ast.Attribute) and node.attr == "type":
            return self.use(node.value)
        return None

    def device_module(self, node) -> Optional[str]:
        """The binding's kind where ``node`` is ``torch.get_device_module(DEVICE)``."""
        if not self._calls(node, "torch.get_device_module") or node.keywords:
            return None
        if not node.args:
            return ACCELERATOR
        if len(node.args) == 1:
            return self.use(node.args[0]) or self.type_use(node.args[0])
        return None


def _has_parameters(function) -> bool:
    arguments = function.args
    return bool(
        arguments.args
        or arguments.posonlyargs
        or arguments.kwonlyargs
        or arguments.vararg
        or arguments.kwarg
    )


def _is_string(node, value: Optional[str] = None) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (value is None or node.value == value)
    )


# -- finding the sites -----------------------------------------------------------------
_OPS = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}


class _Finder:
    """Collects the sites of a module, and what instrumenting each one takes: keyed by
    the node it changes, ("stmt", index, block) counts at the start of that block of
    the node, ("wrap", index, None) wraps the expression, ("side", index, side) wraps a
    guard counted when its truth is ``side``."""

    def __init__(self, program: _Program):
        self.program = program
        self.sites: List[Site] = []
        self.actions: Dict[int, List[Tuple[str, int, object]]] = {}

    def add(self, node, kind, category, action="wrap", argument=None, line=None):
        if category in (ACCELERATOR, CUDA):  # the binding it uses
            category = CUDA_BINDING if category == CUDA else ACCELERATOR
        site = Site(len(self.sites), kind, line or node.lineno, category)
        self.sites.append(site)
        self.actions.setdefault(id(node), []).append((action, site.index, argument))

    def visit(self, node, parent=None):
        """Children first, in field order: the same order wherever it is computed."""
        for child in ast.iter_child_nodes(node):
            self.visit(child, node)
        if isinstance(node, ast.expr):
            self._guard(node, parent)
        if isinstance(node, ast.Call):
            self._call(node, parent)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            module = self.program.device_module(node.value)
            if module and not (isinstance(parent, ast.Call) and parent.func is node):
                kind = f"torch.get_device_module({NAME}).{node.attr}"
                self.add(node, kind, module)

    # guards
    def _guard_text(self, node) -> Optional[Tuple[str, bool, bool]]:
        """(text, truth on an accelerator, category) of a guard, else None."""
        program = self.program
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self._guard_text(node.operand)
            if inner is None:
                return None
            text, side, category = inner
            if isinstance(node.operand, ast.Compare):
                text = f"({text})"
            return f"not {text}", not side, category
        if isinstance(node, ast.Call):
            if program.dotted(node.func) == "torch.accelerator.is_available":
                return "torch.accelerator.is_available()", True, ACCELERATOR
            return None
        if not isinstance(node, ast.Compare):
            return None
        operands = [node.left] + node.comparators
        bindings = [program.type_use(o) for o in operands]
        if not any(bindings):
            return None
        words = []
        for operand, binding in zip(operands, bindings):
            if binding:
                words.append(f"{NAME}.type")
            elif _is_string(operand):
                words.append(json.dumps(operand.value))
            else:
                words.append("A")
        text = words[0]
        for op, word in zip(node.ops, words[1:]):
            text += f" {_OPS[type(op)]} {word}"
        side = True
        for op, left, right in zip(node.ops, operands, operands[1:]):
            negative = isinstance(op, (ast.NotEq, ast.IsNot, ast.NotIn))
            with_cpu = _is_string(left, "cpu") or _is_string(right, "cpu")
            side = side and (negative if with_cpu else not negative)
        strings = [o.value for o in operands if _is_string(o)]
        if any(s != "cpu" for s in strings):
            return text, side, CUDA_ONLY
        return text, side, CUDA_BINDING if CUDA in bindings else ACCELERATOR

    def _guard(self, node, parent) -> None:
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            if self._guard_text(parent) is not None:
                return  # the `not` around it is the guard
        found = self._guard_text(node)
        if found is None:
            return
        text, side, category = found
        is_test = isinstance(parent, (ast.If, ast.IfExp)) and parent.test is node
        innermost = node
        while isinstance(innermost, ast.UnaryOp):
            innermost = innermost.operand
        if not is_test and not isinstance(innermost, ast.Compare):
            return  # is_available() as a value is a torch.accelerator call, no more
        if is_test and isinstance(parent, ast.If) and (side or parent.orelse):
            block = "body" if side else "orelse"
            kind = f"if {text}: <body>" if side else f"if {text}: ... else: <body>"
            first = getattr(parent, block)[0]
            self.add(parent, kind, category, "stmt", block, first.lineno)
        elif is_test and isinstance(parent, ast.IfExp):
            branch = parent.body if side else parent.orelse
            kind = f"<X> if {text} else Y" if side else f"X if {text} else <Y>"
            self.add(branch, kind, category)
        else:
            kind = f"{text} (value on an accelerator)"
            self.add(node, kind, category, "side", side)

    # calls
    def _argument(self, node) -> Tuple[Optional[str], Optional[str]]:
        """("DEVICE" or "DEVICE.type", the binding's kind) where node passes it."""
        binding = self.program.use(node)
        if binding:
            return NAME, binding
        binding = self.program.type_use(node)
        return (f"{NAME}.type", binding) if binding else (None, None)

    def _call(self, node: ast.Call, parent) -> None:
        program = self.program
        func, callee = node.func, program.dotted(node.func)
        if isinstance(func, ast.Attribute):
            module = program.device_module(func.value)
            if module:
                kind = f"torch.get_device_module({NAME}).{func.attr}()"
                self.add(node, kind, module)
                return
        if callee and callee.startswith("torch.accelerator."):
            self.add(node, f"{callee}()", ACCELERATOR)
            return
        if callee in ("torch.Stream", "torch.Event"):
            self.add(node, f"{callee}()", ACCELERATOR)
            return
        module = program.device_module(node)
        if module:
            if not (isinstance(parent, ast.Attribute) and parent.value is node):
                self.add(node, f"torch.get_device_module({NAME})", module)
            return  # else the member read or called through it is the site
        placed = None
        if isinstance(func, ast.Attribute) and func.attr == "to":
            places = node.args[:1] + [
                k.value for k in node.keywords if k.arg == "device"
            ]
            placed = next(filter(None, map(program.use, places)), None)
            if placed:
                self.add(node, f".to({NAME})", placed)
        for keyword in node.keywords:
            if keyword.arg is None or (placed and keyword.arg == "device"):
                continue
            if not callee and keyword.arg not in PLACING_KEYWORDS:
                continue  # parser.add_argument(default=DEVICE.type): not a placement
            text, binding = self._argument(keyword.value)
            if binding:
                self.add(node, f"{keyword.arg}={text}", binding)
        if placed or not callee:
            return
        for argument in node.args:
            text, binding = self._argument(argument)
            if binding:
                self.add(node, f"{callee}({text})", binding)
                return


def _find(tree: ast.Module) -> _Finder:
    finder = _Finder(_Program(tree))
    finder.visit(tree)
    return finder


def sites(source) -> List[Site]:
    """The sites of a program's source (text or bytes), in index order."""
    return _find(ast.parse(source)).sites


# -- instrumenting ---------------------------------------------------------------------
def _counter(function: str, index: int, where: ast.AST, *values) -> ast.Call:
    """``function(index, *values)``, placed where ``where`` is."""
    name = ast.copy_location(ast.Name(id=function, ctx=ast.Load()), where)
    number = ast.copy_location(ast.Constant(value=index), where)
    call = ast.Call(func=name, args=[number, *values], keywords=[])
    return ast.copy_location(call, where)


class _Instrument(ast.NodeTransformer):
    def __init__(self, actions):
        self.actions = actions

    def visit(self, node):
        actions = self.actions.get(id(node), ())
        node = self.generic_visit(node)
        for action, index, argument in actions:
            if action == "stmt":
                block = getattr(node, argument)
                statement = ast.Expr(value=_counter(HIT, index, block[0]))
                block.insert(0, ast.copy_location(statement, block[0]))
            elif action == "wrap":
                node = _counter(HIT, index, node, node)
            else:
                side = ast.copy_location(ast.Constant(value=argument), node)
                node = _counter(HIT_IF, index, node, node, side)
        return node


def compile_traced(source, filename: str):
    """The program's code with a counter at each of its sites."""
    tree = ast.parse(source, filename)
    finder = _find(tree)
    tree = _Instrument(finder.actions).visit(tree)
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec", dont_inherit=True)


# -- counting, in the traced process ---------------------------------------------------
_HITS: Dict[int, int] = {}
_STATE = {"folder": None, "pid": None}


def _hit(index: int, value=None):
    _HITS[index] = _HITS.get(index, 0) + 1
    return value


def _hit_if(index: int, value, side: bool):
    if bool(value) == side:
        _HITS[index] = _HITS.get(index, 0) + 1
    return value


# Under torch.compile a counter is a graph break, as torch.compiler.disable makes one
# (set without importing torch): inlined, dynamo would count at trace time only and
# recompile as the counts change. A program compiled with fullgraph=True cannot be traced.
_hit._torchdynamo_disable = True
_hit_if._torchdynamo_disable = True


def _write() -> None:
    folder = _STATE["folder"]
    if folder is None or _STATE["pid"] != os.getpid():
        return
    path = os.path.join(folder, f"hits-{os.getpid()}.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({str(k): v for k, v in _HITS.items()}, handle)


def _forked() -> None:
    _HITS.clear()
    _STATE["pid"] = os.getpid()


def start(folder: str) -> None:
    """Count in this process from now on; write the counts to ``folder`` at exit."""
    setattr(builtins, HIT, _hit)
    setattr(builtins, HIT_IF, _hit_if)
    if _STATE["folder"] is None:
        atexit.register(_write)
        os.register_at_fork(after_in_child=_forked)
    _STATE["folder"], _STATE["pid"] = folder, os.getpid()
    _HITS.clear()


def read_hits(folder: str) -> Dict[int, int]:
    """The counts every traced process wrote into ``folder``, summed."""
    total: Dict[int, int] = {}
    for name in sorted(os.listdir(folder)):
        if name.startswith("hits-") and name.endswith(".json"):
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                for index, count in json.load(handle).items():
                    total[int(index)] = total.get(int(index), 0) + count
    return total


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def run_traced(path: str, folder: str) -> None:
    """Run the program as ``runpy.run_path(path, run_name="__main__")`` does, traced."""
    import runpy

    code = compile_traced(_read(path), path)
    start(folder)
    runpy._run_module_code(code, None, "__main__", pkg_name="", script_name=path)


def exec_into(namespace: dict, path: str, folder: str) -> None:
    """Run the traced program in ``namespace`` (a spawned child's ``__mp_main__``)."""
    start(folder)
    namespace["__file__"] = path
    exec(compile_traced(_read(path), path), namespace)


_STUB = """\
# The traced program, as a spawned child imports it (see tests/branch_tracer.py).
def _torchport_traced_main():
    import importlib.util
    import sys

    if {module!r} not in sys.modules:
        spec = importlib.util.spec_from_file_location({module!r}, {tracer!r})
        sys.modules[{module!r}] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[{module!r}])
    sys.modules[{module!r}].exec_into(globals(), {program!r}, {folder!r})


_torchport_traced_main()
del _torchport_traced_main
"""


def _trace_spawned_children(program: str, folder: str) -> None:
    """Children started by ``spawn`` import the traced program as ``__mp_main__``."""
    import multiprocessing.spawn as spawn

    stub = os.path.join(folder, "traced_main.py")
    with open(stub, "w", encoding="utf-8") as handle:
        handle.write(
            _STUB.format(
                module=MODULE,
                tracer=os.path.abspath(__file__),
                program=program,
                folder=folder,
            )
        )
    original = spawn.get_preparation_data

    def get_preparation_data(name):
        data = original(name)
        main = data.get("init_main_from_path")
        if main and os.path.normpath(main) == os.path.normpath(program):
            data["init_main_from_path"] = stub
        return data

    spawn.get_preparation_data = get_preparation_data


def main(argv: List[str]) -> None:
    """``branch_tracer.py --hits DIR PROGRAM ARGS...``: ``python PROGRAM ARGS...``, traced."""
    if len(argv) < 3 or argv[0] != "--hits":
        raise SystemExit("usage: branch_tracer.py --hits DIR PROGRAM [ARGS...]")
    folder, program = argv[1], os.path.abspath(argv[2])
    sys.argv = [argv[2], *argv[3:]]
    sys.path[0] = os.path.dirname(program)
    _trace_spawned_children(program, folder)
    run_traced(program, folder)


if __name__ == "__main__":
    import importlib.util

    _spec = importlib.util.spec_from_file_location(MODULE, os.path.abspath(__file__))
    sys.modules[MODULE] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules[MODULE])
    sys.modules[MODULE].main(sys.argv[1:])
