"""Import statements as sites: the names an import binds, and a mixin that hands a
pass each import statement instead of its names."""

from __future__ import annotations

from typing import List, Tuple, Union

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
