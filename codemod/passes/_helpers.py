"""What several passes share: import sites, and whether a guard protects CUDA-only code.

``guards_cuda_only_code`` / ``cuda_only_guard_calls`` classify an ``if`` whose body is
CUDA-only (a name under ``catalog.CUDA_ONLY``), so that a pass rewriting
``torch.cuda.is_available()`` can leave that guard alone instead of widening it to
every accelerator; the report-only pass reports such guards (TP910).
"""

from __future__ import annotations

from typing import Callable, List, Optional, Tuple, Union

import libcst as cst

from codemod.catalog import CUDA_ONLY, PORTED, under
from codemod.names import dotted_name

IMPORTED = (
    "imports a CUDA-only API; its uses are reported where they occur (remove the "
    "import once they are gone)"
)

DEVICE_PROPERTIES = "torch.cuda.get_device_properties"
AVAILABILITY = {"torch.cuda.is_available", "torch.accelerator.is_available"}
QualifiedName = Callable[[cst.CSTNode], Optional[str]]


def imported_names(
    node: Union[cst.Import, cst.ImportFrom],
) -> List[Tuple[cst.CSTNode, str]]:
    """(alias node, full dotted name) of each name an absolute import binds;
    ``from m import *`` gives (the statement, ``m``)."""
    if isinstance(node, cst.Import):
        return [(alias, dotted_name(alias.name) or "") for alias in node.names]
    if node.relative or node.module is None:
        return []
    module = dotted_name(node.module) or ""
    if isinstance(node.names, cst.ImportStar):
        return [(node, module)]
    return [(alias, f"{module}.{dotted_name(alias.name)}") for alias in node.names]


class _CudaOnlyFinder(cst.CSTVisitor):
    def __init__(self, qualified_name: QualifiedName) -> None:
        self.qualified_name = qualified_name
        self.found = False

    def _check(self, node: cst.CSTNode) -> bool:
        name = self.qualified_name(node) or dotted_name(node)
        if under(name, PORTED):
            return False
        if under(name, CUDA_ONLY):
            self.found = True
        return not self.found

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if is_sm_version(node, self.qualified_name):
            self.found = True
        return self._check(node)

    def visit_Name(self, node: cst.Name) -> bool:
        return self._check(node)

    def visit_Import(self, node: cst.Import) -> bool:
        if any(under(name, CUDA_ONLY) for _, name in imported_names(node)):
            self.found = True
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if any(under(name, CUDA_ONLY) for _, name in imported_names(node)):
            self.found = True
        return False


def is_sm_version(node: cst.Attribute, qualified_name: QualifiedName) -> bool:
    """``torch.cuda.get_device_properties(i).major`` (or ``.minor``)."""
    return (
        node.attr.value in ("major", "minor")
        and isinstance(node.value, cst.Call)
        and qualified_name(node.value.func) == DEVICE_PROPERTIES
    )


def _availability_calls(test: cst.BaseExpression, qualified_name: QualifiedName):
    """``is_available()`` calls that must be true for the body to run: the test
    itself or an operand of an ``and`` chain."""
    if isinstance(test, cst.Call) and qualified_name(test.func) in AVAILABILITY:
        return [test]
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _availability_calls(test.left, qualified_name) + _availability_calls(
            test.right, qualified_name
        )
    return []


def cuda_only_guard_calls(
    node: Union[cst.If, cst.IfExp], qualified_name: QualifiedName
) -> List[cst.Call]:
    """The ``torch.cuda.is_available()`` / ``torch.accelerator.is_available()`` calls
    of ``node``'s test when what they protect is CUDA-only code: the body (not the
    ``else``) or the rest of an ``and`` chain (``is_available() and
    get_device_capability()[0] >= 8``); else [].

    ``qualified_name(node)`` resolves a node of the same tree (``Pass.qualified_name``);
    names it cannot resolve are read as written.
    """
    calls = _availability_calls(node.test, qualified_name)
    if not calls:
        return []
    finder = _CudaOnlyFinder(qualified_name)
    node.test.visit(finder)
    node.body.visit(finder)
    return calls if finder.found else []


def guards_cuda_only_code(
    node: Union[cst.If, cst.IfExp], qualified_name: QualifiedName
) -> bool:
    """True when ``node`` is ``if torch.cuda.is_available():`` (or an ``and`` chain with
    it, or a conditional expression) around CUDA-only code."""
    return bool(cuda_only_guard_calls(node, qualified_name))


class ImportSites:
    """Mixin: hand each import statement to ``_imports`` and skip its names (an
    import binds names; the uses are visited where they occur)."""

    def _imports(self, node: Union[cst.Import, cst.ImportFrom]) -> None:
        raise NotImplementedError

    def visit_Import(self, node: cst.Import) -> bool:
        self._imports(node)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        self._imports(node)
        return False


def target_name(node: cst.CSTNode) -> str:
    """The last name of an assignment target: ``device`` of ``self.device = ...``."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return ""


def is_guard(test: cst.BaseExpression, device_name: str) -> bool:
    """``DEVICE.type != "cpu"``, the guard torchport emits."""
    return (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.NotEqual)
        and isinstance(test.left, cst.Attribute)
        and isinstance(test.left.value, cst.Name)
        and test.left.value.value == device_name
        and test.left.attr.value == "type"
        and isinstance(test.comparisons[0].comparator, cst.SimpleString)
        and test.comparisons[0].comparator.evaluated_value == "cpu"
    )


class _Unguard(cst.CSTTransformer):
    def __init__(self, device_name: str) -> None:
        super().__init__()
        self.device_name = device_name

    def leave_IfExp(self, original_node, updated_node):
        if is_guard(updated_node.test, self.device_name):
            return updated_node.body
        return updated_node


def without_guards(value: cst.BaseExpression, device_name: str) -> cst.BaseExpression:
    """``value`` with each ``X if DEVICE.type != "cpu" else Y`` in it reduced to X:
    for an expression that is about to be put behind that same guard."""
    return value.visit(_Unguard(device_name))  # type: ignore[return-value]


def is_binding_type(node: cst.CSTNode, device_name: str) -> bool:
    """``DEVICE.type`` of the module's device binding."""
    return (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == device_name
        and node.attr.value == "type"
    )
