"""Which receivers are CUDA events and streams (and which values are device
indices), known by their bindings: the dataflow behind TP303, TP305 and TP307.

A name is known when every binding of it in its scope (the function, or the module)
is a call that makes one (``start = torch.cuda.Event(...)``); an attribute
(``self.start``) when every assignment to that attribute the pass has seen is.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from codemod.passes.base import attribute_name
from codemod.passes.runtime.tables import EVENT, INT, STREAM, canonical, is_name

# Calls that give an int.
INT_CALLS = {
    "torch.cuda.current_device",
    "torch.cuda.device_count",
    "torch.accelerator.current_device_index",
    "torch.accelerator.device_count",
}
INT_BUILTINS = {"int", "len"}
INT_METHODS = {"get_device"}  # Tensor.get_device()
# torch.cuda calls (after ALIASES) that make an event or a stream.
MAKERS = {
    "torch.cuda.Event": EVENT,
    "torch.cuda.Stream": STREAM,
    "torch.cuda.current_stream": STREAM,
    "torch.cuda.default_stream": STREAM,
}
Kinds = Dict[str, Optional[str]]


class _Bindings(cst.CSTVisitor):
    """What one scope binds: name (or attribute) -> EVENT or STREAM when every
    binding of it is a call that makes one, "events"/"streams" for a list or tuple
    of them, None when anything else is bound to it."""

    def __init__(self, kind_of_call) -> None:
        self.kind_of_call = kind_of_call
        self.names: Kinds = {}
        self.attributes: Kinds = {}

    def _kind(self, value: Optional[cst.BaseExpression]) -> Optional[str]:
        if isinstance(value, cst.Call):
            return self.kind_of_call(value)
        if isinstance(value, cst.Integer):
            return INT
        if isinstance(value, (cst.List, cst.Tuple)) and value.elements:
            kinds = {self._kind(e.value) for e in value.elements}
        elif isinstance(value, cst.ListComp):
            kinds = {self._kind(value.elt)}
        else:
            return None
        kind = kinds.pop() if len(kinds) == 1 else None
        return kind + "s" if kind in (EVENT, STREAM) else None

    def bind(self, target: cst.CSTNode, value: Optional[cst.BaseExpression]) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            values = None
            if isinstance(value, (cst.Tuple, cst.List)):
                if len(value.elements) == len(target.elements):
                    values = [e.value for e in value.elements]
            for i, element in enumerate(target.elements):
                self.bind(element.value, values[i] if values else None)
            return
        if isinstance(target, cst.StarredElement):
            self.bind(target.value, None)
            return
        if isinstance(target, cst.Name):
            table, key = self.names, target.value
        elif isinstance(target, cst.Attribute):
            table, key = self.attributes, target.attr.value
        else:
            return
        kind = self._kind(value)
        table[key] = kind if table.get(key, kind) == kind else None

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self.bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.bind(node.target, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.bind(node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        counts = isinstance(node.iter, cst.Call) and is_name(node.iter.func, "range")
        if counts and isinstance(node.target, cst.Name):
            self.bind(node.target, cst.Integer("0"))  # an int, whatever its value
        else:
            self.bind(node.target, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.bind(node.asname.name, None)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self.bind(node.name.name, None)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        local = node.asname.name if node.asname else node.name
        while isinstance(local, cst.Attribute):
            local = local.value
        self.bind(local, None)

    def visit_Param(self, node: cst.Param) -> None:
        self.bind(node.name, None)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.bind(node.name, None)
        return False  # its own scope

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.bind(node.name, None)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


class _Attributes(_Bindings):
    """Attributes bound anywhere in a chunk, methods and nested classes included."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return True

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return True


class CudaObjects:
    """Which receivers are CUDA events and streams, known by their bindings.

    A name is known when every binding of it in its scope (the function, or the
    module) is a call that makes one (``start = torch.cuda.Event(...)``); an
    attribute (``self.start``) when every assignment to that attribute the pass
    has seen is. The passes see a statement that calls one of ``METHODS`` with the
    whole top-level statement around it (``CudaRuntime.CONTEXT``); module-level
    bindings come from the top-level statements seen before.
    """

    def __init__(self, qualified_name, bound=frozenset()) -> None:
        self.qualified_name = qualified_name  # of a name, or of a call's callee
        self.bound = bound  # names the module binds (a builtin it shadows)
        self.module: Kinds = {}  # module-level names, from top-level chunks
        self.attributes: Kinds = {}
        # [is_class, node, its names or None until asked] of the enclosing defs
        self.scopes: List[list] = []
        self.top_level = False
        # Chunks not read yet: most never ask what an object is, and reading a
        # chunk walks all of it.
        self.unread: List[Tuple[cst.Module, bool]] = []

    def kind_of_call(self, call: cst.Call) -> Optional[str]:
        name = self.qualified_name(call)
        if name in INT_CALLS:
            return INT
        if name is None and attribute_name(call) in INT_METHODS:
            return INT
        func = call.func
        if isinstance(func, cst.Name) and func.value in INT_BUILTINS:
            return INT if func.value not in self.bound else None
        return MAKERS.get(canonical(name or ""))

    def _merge(self, table: Kinds, found: Kinds) -> None:
        for key, kind in found.items():
            table[key] = kind if table.get(key, kind) == kind else None

    def enter_chunk(self, module: cst.Module, top_level: bool) -> None:
        self.scopes = []
        self.top_level = top_level
        self.unread.append((module, top_level))

    def _read_chunks(self) -> None:
        """The bindings of the chunks entered so far, in file order."""
        for module, top_level in self.unread:
            attributes = _Attributes(self.kind_of_call)
            module.visit(attributes)
            self._merge(self.attributes, attributes.attributes)
            if top_level:
                names = _Bindings(self.kind_of_call)
                module.visit(names)
                self._merge(self.module, names.names)
        self.unread = []

    def enter_scope(self, node, is_class: bool) -> None:
        self.scopes.append([is_class, node, None])

    def leave_scope(self) -> None:
        self.scopes.pop()

    def _names_of(self, scope: list) -> Kinds:
        if scope[2] is None:
            names = _Bindings(self.kind_of_call)
            if isinstance(scope[1], cst.FunctionDef):
                scope[1].params.visit(names)
            scope[1].body.visit(names)
            scope[2] = names.names
        return scope[2]

    def _name(self, name: str) -> Optional[str]:
        for depth, scope in enumerate(reversed(self.scopes)):
            if scope[0] and depth > 0:
                continue  # a class body is not a scope of its methods
            names = self._names_of(scope)
            if name in names:
                return names[name]
        self._read_chunks()
        return self.module.get(name) if self.top_level else None

    def kind(self, node: cst.CSTNode) -> Optional[str]:
        """EVENT, STREAM (or their plural) for an expression known to be one."""
        if isinstance(node, cst.Call):
            return self.kind_of_call(node)
        if isinstance(node, cst.Integer):
            return INT
        if self.qualified_name(node):  # an imported name (`torch.cuda`): not an object
            return None
        if isinstance(node, cst.Name):
            return self._name(node.value)
        if isinstance(node, cst.Attribute):
            self._read_chunks()
            return self.attributes.get(node.attr.value)
        if isinstance(node, cst.Subscript):
            kind = self.kind(node.value)
            return kind[:-1] if kind in (EVENT + "s", STREAM + "s") else None
        return None
