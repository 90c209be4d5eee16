"""Functions that TorchScript or ``torch.compile`` compile: the device accessor is
no code either takes.

``torch.jit.script`` compiles a function from its source, and a call of the accessor
(a cached Python function) is not TorchScript: scripting fails, at import for a
decorated function. ``torch.compile`` traces the function with dynamo, which stops
at the accessor's ``torch.accelerator.device_count()`` (a graph break in every call;
an error with ``fullgraph=True``). Both compile the module's own functions that the
body calls too. ``torch.jit.trace`` runs the function in Python but records the
operators it calls: where the accessor is first called there, a backend whose
device count is an operator (the simulator's) fails the trace.

A site inside such a function is reported, not fixed: no form the compiler takes is
exact (a device taken from an input tensor is another device where the input is
elsewhere; one computed at import asks for the device there). Found: functions
decorated with ``@torch.jit.script``, ``@torch.compile`` or ``@torch.compile(...)``,
and module functions passed by name to ``torch.jit.script(f)``,
``torch.compile(f, ...)`` or ``torch.jit.trace(f, ...)`` anywhere in the module.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Tuple

from codemod.passes.names import ModuleFacts

SCRIPT = "torch.jit.script"
COMPILE = "torch.compile"
TRACE = "torch.jit.trace"
COMPILERS = {
    SCRIPT: SCRIPT,
    "torch.jit.script_method": SCRIPT,
    COMPILE: COMPILE,
    TRACE: TRACE,
}
WHY = {
    SCRIPT: "TorchScript (torch.jit.script) compiles this function and cannot call"
    " the device accessor",
    COMPILE: "torch.compile compiles this function and dynamo stops at the device"
    " accessor's query (a graph break; an error with fullgraph=True)",
    TRACE: "torch.jit.trace records this function's operators, and the device"
    " accessor's first query may be one (a backend whose device count is an"
    " operator fails the trace)",
}
ADVICE = (
    "; left as written: pass the device in as an argument, or use an input"
    " tensor's `.device` where it is the same device"
)
Span = Tuple[int, int, str]  # first line, last line, the compiler's name

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def compiled_functions(tree: ast.Module, facts: ModuleFacts) -> List[Span]:
    """The lines of each function the module has compiled, with the compiler."""
    top = {s.name: s for s in tree.body if isinstance(s, _FUNCTIONS)}
    found: Dict[int, Tuple[ast.AST, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, _FUNCTIONS):
            for decorator in node.decorator_list:
                compiler = _compiler(decorator, facts)
                if compiler:
                    found[id(node)] = (node, compiler)
        elif isinstance(node, ast.Call) and node.args:
            compiler = COMPILERS.get(facts.qualified_name(node.func) or "")
            target = node.args[0]
            if compiler and isinstance(target, ast.Name) and target.id in top:
                found.setdefault(id(top[target.id]), (top[target.id], compiler))
    stack = list(found.values())
    while stack:  # what a compiled function calls is compiled too
        function, compiler = stack.pop()
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                callee = top.get(node.func.id)
                if callee is not None and id(callee) not in found:
                    found[id(callee)] = (callee, compiler)
                    stack.append((callee, compiler))
    return sorted(
        (_first_line(f), f.end_lineno or f.lineno, compiler)
        for f, compiler in found.values()
    )


def _compiler(decorator: ast.AST, facts: ModuleFacts) -> str:
    """``@torch.jit.script``, ``@torch.compile``, ``@torch.compile(fullgraph=True)``."""
    if isinstance(decorator, ast.Call) and not decorator.args:
        decorator = decorator.func
    return COMPILERS.get(facts.qualified_name(decorator) or "", "")


def _first_line(function: ast.AST) -> int:
    lines = [d.lineno for d in getattr(function, "decorator_list", [])]
    return min([function.lineno, *lines])


def reason(spans: Sequence[Span], line: int) -> Optional[str]:
    """Why a site at ``line`` is left as written, if a compiled function holds it."""
    for first, last, compiler in spans:
        if first <= line <= last:
            return "; " + WHY[compiler] + ADVICE
    return None
