"""Import statements as sites: the names an import binds, and a mixin that hands a
pass each import statement instead of its names."""

from __future__ import annotations

from typing import List, Optional, Set, Tuple, Union

import libcst as cst

from codemod.passes.names import dotted_name

IMPORTED = (
    "imports a CUDA-only API; its uses are reported where they occur (remove the "
    "import once they are gone)"
)


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


def bound_name(alias: cst.CSTNode) -> Optional[str]:
    """The name an import alias binds for its module or object: ``nvtx`` of ``from
    torch.cuda import nvtx`` or ``import torch.cuda.nvtx as nvtx``; None for ``import
    torch.cuda.nvtx`` (which binds ``torch``) and a star import."""
    if not isinstance(alias, cst.ImportAlias):
        return None
    if alias.asname is not None:
        name = alias.asname.name
        return name.value if isinstance(name, cst.Name) else None
    return alias.name.value if isinstance(alias.name, cst.Name) else None


def head_name(node: cst.CSTNode) -> Optional[str]:
    """``nvtx`` of ``nvtx.range_push("x")`` (a call, an attribute, a subscript)."""
    while True:
        if isinstance(node, cst.Expr):
            node = node.value
        elif isinstance(node, cst.Call):
            node = node.func
        elif isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        else:
            break
    return node.value if isinstance(node, cst.Name) else None


SETTLED = (
    "imports a CUDA-only API whose every use here is ported, kept for CUDA or "
    "informational: the import itself runs everywhere"
)


def settled_imports(imports, uses) -> Set[int]:
    """The ``id()`` of each import report (``imports``: bound name -> its
    diagnostic) none of whose uses is left as an error (``uses``: bound name -> for
    each use decided, whether it was rewritten or is informational): the import
    itself runs everywhere, so it is informational too (``SETTLED``). A use kept
    for CUDA behind ``_DEVICE().type == "cuda"`` (a first run's) is no site."""
    return {
        id(diagnostic)
        for name, diagnostic in imports.items()
        if all(uses.get(name, ()))
    }


class ImportSites:
    """Mixin: hand each import statement to ``_imports`` and skip its names (an
    import binds names; the uses are visited where they occur)."""

    def report_import(self, alias: cst.CSTNode, code: str) -> None:
        """Report an import of a CUDA-only API; informational after the passes if
        every use of the name it binds was rewritten or is (``settled_imports``)."""
        context = self.context  # type: ignore[attr-defined]
        count = len(context.diagnostics)
        self.report(alias, code, IMPORTED)  # type: ignore[attr-defined]
        name = bound_name(alias)
        if name is not None and len(context.diagnostics) > count:
            context.import_reports[name] = context.diagnostics[-1]

    def _imports(self, node: Union[cst.Import, cst.ImportFrom]) -> None:
        raise NotImplementedError

    def visit_Import(self, node: cst.Import) -> bool:
        self._imports(node)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        self._imports(node)
        return False
