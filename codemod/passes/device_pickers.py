"""Functions of the program's own that pick a device by name:
``def pick_device(): if torch.cuda.is_available(): return "cuda" ...``.

A function that returns at least two device names as literals, "cuda" among them,
picks a device: its ``return "cuda"`` is a device string (TP103), and becomes
``_DEVICE().type`` as the "cuda" of ``"cuda" if ... else "cpu"`` does. The test
around it is then widened as any test around portable code is: on MPS the widened
branch answers "mps", as the program's own MPS branch does; the other devices'
branches are portable as they are and kept. Without this the "cuda" is a string
in a position torchport cannot type (TP109), and the availability test around it
stays CUDA's: the program runs on the CPU on every other accelerator.

Read from the ``ast`` before the passes run: a chunk holds the statements that
mention CUDA, not the function's other returns.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Sequence, Tuple

import libcst as cst

from codemod.passes.device_positions import Kind
from codemod.passes.device_tables import DEVICE_TYPES
from codemod.passes.names import ast_position

PICKED = DEVICE_TYPES | {"cuda"}
PICKED_KIND = Kind.STRING
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = FUNCTIONS + (ast.ClassDef, ast.Lambda)


def returned_device_names(function: ast.AST) -> List[ast.Constant]:
    """The string literals naming a device that ``function`` itself returns
    (not a function defined inside it)."""
    found: List[ast.Constant] = []
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant):
            if node.value.value in PICKED:
                found.append(node.value)
        stack.extend(ast.iter_child_nodes(node))
    return found


def picked_cuda(tree: ast.Module, lines: Sequence[str]) -> Dict[Tuple[int, int], Kind]:
    """(line, 1-based column) of each "cuda" a device picker returns -> its kind
    (with the followed literals of ``codemod.passes.device_values``)."""
    found: Dict[Tuple[int, int], Kind] = {}
    for function in ast.walk(tree):
        if not isinstance(function, FUNCTIONS):
            continue
        names = returned_device_names(function)
        if len({n.value for n in names}) < 2:
            continue
        found.update(
            (ast_position(n, lines), PICKED_KIND) for n in names if n.value == "cuda"
        )
    return found


class DevicePickers:
    """Mixin for the device-strings pass (its ``mark``, ``position``, ``context``)."""

    def visit_Return(self, node: cst.Return) -> None:
        value = node.value
        values = self.context.device_values  # type: ignore[attr-defined]
        if value is not None and values.get(self.position(value)) is PICKED_KIND:
            self.mark(value, Kind.STRING, "TP103")  # type: ignore[attr-defined]
