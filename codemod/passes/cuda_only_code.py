"""Whether code is CUDA-only, and whether a guard protects such code.

CUDA-only code uses a name under ``catalog.CUDA_ONLY`` (a CUDA-only library or torch
module) or one the CUDA-only pass reports, reads an SM version, or calls a function
of the program's own named for CUDA. ``guards_cuda_only_code`` /
``cuda_only_guard_calls`` classify an ``if`` whose body is CUDA-only, so that a pass
rewriting ``torch.cuda.is_available()`` can leave that guard alone instead of
widening it to every accelerator; the CUDA-only pass reports such guards (TP910).
"""

from __future__ import annotations

import re
from typing import List, Optional, Sequence, Set, Union

import libcst as cst

from codemod import catalog
from codemod.catalog import CUDA_ONLY, PORTED, under
from codemod.passes.base import walk
from codemod.passes.guards import QualifiedName, availability_calls
from codemod.passes.imported import imported_names
from codemod.passes.names import dotted_name
from codemod.passes.query_sites import ported_queries

DEVICE_PROPERTIES = "torch.cuda.get_device_properties"
# What the CUDA-only pass reports stays CUDA-only too: its names and modules, and
# its literals ("cudagraphs", "CUDA_LAUNCH_BLOCKING", the profiler's CUDA columns,
# also read as attributes).
REPORTED = tuple(catalog.codes_of("cuda_only"))
REPORTED_STRINGS = frozenset(catalog.names_of("cuda_only", ("string",)))


class _CudaOnlyFinder(cst.CSTVisitor):
    def __init__(self, qualified_name: QualifiedName) -> None:
        self.qualified_name = qualified_name
        self.found = False
        self.ported: Set[cst.CSTNode] = set()  # queries ported where they are

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node in self.ported:
            return False
        return super().on_visit(node)

    def _check(self, node: cst.CSTNode) -> bool:
        name = self.qualified_name(node) or dotted_name(node)
        if under(name, PORTED):
            return False
        if under(name, CUDA_ONLY) or under(name, REPORTED):
            self.found = True
        return not self.found

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if is_sm_version(node, self.qualified_name):
            self.found = True
        if node.attr.value in REPORTED_STRINGS:
            self.found = True
        return self._check(node)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if node.evaluated_value in REPORTED_STRINGS:
            self.found = True

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


# A function of the program's own whose name says it is CUDA's (`dtw_cuda`,
# `cuda_kernel`): what it does is not in view, so it is taken to need CUDA.
CUDA_NAMED = re.compile(r"(?:^|_)cuda(?:_|$)", re.IGNORECASE)


def calls_cuda_named(node: cst.CSTNode, qualified_name: QualifiedName) -> bool:
    """Whether ``node`` calls a function of the program's own named for CUDA."""
    for call in walk(node):
        if not isinstance(call, cst.Call):
            continue
        func = call.func
        name = func.attr if isinstance(func, cst.Attribute) else func
        if (
            isinstance(name, cst.Name)
            and name.value.lower() != "cuda"  # `.cuda()`: its own rule
            and CUDA_NAMED.search(name.value)
            and not under(qualified_name(func), ("torch",))
        ):
            return True
    return False


def cuda_only_code(
    parts: Sequence[Optional[cst.CSTNode]], qualified_name: QualifiedName
) -> bool:
    """Whether ``parts`` use a CUDA-only name of the catalogue."""
    finder = _CudaOnlyFinder(qualified_name)
    for part in parts:
        if part is not None:
            # a query in a message or a capability test needs no CUDA once ported
            finder.ported = ported_queries(part, qualified_name)
            part.visit(finder)
    return finder.found


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
    calls = availability_calls(node.test, qualified_name)
    if not calls:
        return []
    return calls if cuda_only_code((node.test, node.body), qualified_name) else []


def guards_cuda_only_code(
    node: Union[cst.If, cst.IfExp], qualified_name: QualifiedName
) -> bool:
    """True when ``node`` is ``if torch.cuda.is_available():`` (or an ``and`` chain with
    it, or a conditional expression) around CUDA-only code."""
    return bool(cuda_only_guard_calls(node, qualified_name))
