"""The CUDA-only pass's imports: CUDA-only modules imported (pynvml, apex with advice
per part), ``from torch.cuda import *`` and the bare calls of the names it binds,
and torch.cuda imported when another import fails (TP906, TP907, TP913).

``CudaOnlyImports`` is the part of ``codemod.passes.cuda_only.CudaOnly`` that sees
import statements and the ``except`` handlers around them.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Union

import libcst as cst

from codemod import catalog
from codemod.catalog import under
from codemod.passes.imported import ImportSites, imported_names
from codemod.passes.names import dotted_name

# Qualified name (or prefix, at a dot) -> rule: the catalogue's rows of the pass.
# apex is reported at its imports only, with advice per module (APEX below).
REFERENCES: Dict[str, str] = {
    n: code for n, code in catalog.codes_of("cuda_only").items() if n != "apex"
}
# apex module -> what to use instead (longest prefix wins).
APEX: Dict[str, str] = {
    "apex": "NVIDIA apex is CUDA-only; use the PyTorch equivalent of what you use",
    "apex.amp": "apex.amp is CUDA-only; use `torch.autocast(_DEVICE().type)` and "
    "`torch.amp.GradScaler(_DEVICE().type)`",
    "apex.optimizers": "apex's fused optimizers are CUDA-only; use `torch.optim.AdamW`"
    "/`Adam`/`SGD` (with `fused=True` where the device supports it)",
    "apex.parallel": "apex.parallel is CUDA-only; use `torch.nn.parallel."
    "DistributedDataParallel` and `torch.nn.SyncBatchNorm`",
    "apex.normalization": "apex's fused norms are CUDA-only; use `torch.nn.LayerNorm` "
    "/ `torch.nn.RMSNorm` (torch 2.4)",
}
STAR_ADVICE = (
    "`from {module} import *` hides which CUDA names the code uses; import them by "
    "name (or write `{module}.<name>`) so that torchport can port them"
)
STAR_NAME_ADVICE = (
    "`{name}` comes from `from {module} import *`: write `{module}.{name}` so that "
    "torchport can port it"
)
FALLBACK_IMPORT_ADVICE = (
    "a torch.cuda import taken when another import fails: the names it binds are "
    "CUDA-only where it is taken and their uses cannot tell; import the portable "
    "API only (`torch.amp` for GradScaler and autocast)"
)
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}
# Each module's names, for what a star import brings in.
_CATALOGUE_NAMES = [n for row in catalog.ROWS for n in row.names]


def star_names(module: str) -> Set[str]:
    """The catalogue's names directly under ``module``: what ``from module import *``
    binds that code may call bare."""
    return {
        n[len(module) + 1 :]
        for n in _CATALOGUE_NAMES
        if n.startswith(module + ".") and "." not in n[len(module) + 1 :]
    }


# A line calling a star-imported torch.cuda function bare holds a site.
STAR_CALLS = re.compile(
    r"(?<![\w.])(?:%s)\(" % "|".join(sorted(star_names("torch.cuda"), key=len)[::-1])
)
_STAR_IMPORT = re.compile(r"from\s+torch\.cuda[\w.]*\s+import\s+\*")


class CudaOnlyImports(ImportSites):
    """Mixin for the CUDA-only pass: its import sites, and the bare calls of what
    ``from torch.cuda import *`` binds (``star_call``)."""

    HITS = STAR_CALLS

    @classmethod
    def hits_in(cls, source: str):
        # The bare names of torch.cuda are sites only after a star import of it.
        return cls.HITS if _STAR_IMPORT.search(source) else None

    def __init__(self, context) -> None:
        super().__init__(context)  # type: ignore[call-arg]
        # name -> module, for the names of `from torch.cuda... import *` (the file's
        # chunks come in order, so the import is seen before the calls).
        self.starred: Dict[str, str] = {}
        self.handlers: List[bool] = []  # enclosing `except`: does it catch ImportError

    def _imports(self, node: Union[cst.Import, cst.ImportFrom]) -> None:
        if self._cuda_only_import(node):
            return
        for alias, name in imported_names(node):
            prefix = under(name, REFERENCES)
            if prefix in ("pynvml", None):
                self._vendor_import(alias, name)
            else:
                self.report_import(alias, REFERENCES[prefix])

    def _cuda_only_import(self, node: Union[cst.Import, cst.ImportFrom]) -> bool:
        """``from torch.cuda import *``, or a torch.cuda import in an ``except
        ImportError:`` handler: reported whole (TP913)."""
        if not isinstance(node, cst.ImportFrom) or node.module is None:
            return False
        module = dotted_name(node.module) or ""
        if not under(module, ("torch.cuda",)) or node.relative:
            return False
        if isinstance(node.names, cst.ImportStar):
            bound = self.context.facts.bound | self.context.facts.functions
            for name in star_names(module) - bound:
                self.starred[name] = module
            self.report(node, "TP913", STAR_ADVICE.format(module=module))
            return True
        if any(self.handlers):
            self.report(node, "TP913", FALLBACK_IMPORT_ADVICE)
            return True
        return False

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        caught = node.type
        names = (
            [e.value for e in caught.elements]
            if isinstance(caught, cst.Tuple)
            else [caught]
        )
        self.handlers.append(
            any((dotted_name(n) or "").split(".")[-1] in IMPORT_ERRORS for n in names)
        )

    def leave_ExceptHandler(self, original_node, updated_node):
        self.handlers.pop()
        return updated_node

    def _vendor_import(self, node: cst.CSTNode, name: Optional[str]) -> None:
        if under(name, ("pynvml",)):
            self.report(node, "TP906")
        elif under(name, ("apex",)):
            prefix = max((p for p in APEX if under(name, (p,))), key=len)
            self.report(node, "TP907", APEX[prefix])

    def star_call(self, node: cst.Call) -> None:
        """A star-imported torch.cuda function called bare."""
        func = node.func
        if isinstance(func, cst.Name) and func.value in self.starred:
            module = self.starred[func.value]
            message = STAR_NAME_ADVICE.format(name=func.value, module=module)
            self.report(func, "TP913", message)  # type: ignore[attr-defined]
