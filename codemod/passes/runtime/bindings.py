"""Which receivers are CUDA events and streams (and which values are device
indices), known by their bindings: the dataflow behind TP303, TP305 and TP307.

A name is known when every binding of it in its scope (the function, the
comprehension, or the module) gives one: a call that makes one (``start =
torch.cuda.Event(...)``), another name known so, an element of a list or tuple of
them (``starts[i]``, ``for s, e in zip(starts, ends)``) that the scope keeps to
itself (``containers``). An attribute (``self.start``) is known when every
assignment to that attribute the pass has seen is such a call.
"""

from __future__ import annotations

import bisect
import re
from typing import Dict, List, Optional, Tuple

import libcst as cst

from codemod.model.lines import split_lines
from codemod.passes.base import attribute_name
from codemod.passes.runtime.containers import (
    EMPTY,
    Kinds,
    Resolver,
    Source,
    Uses,
    comprehension_names,
    literal,
    pick,
    single,
    subscripted,
)
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


def _paired(target, value) -> Optional[list]:
    """The values of ``a, b = x, y``, one for each target."""
    if not isinstance(value, (cst.Tuple, cst.List)):
        return None
    if any(isinstance(e, cst.StarredElement) for e in value.elements):
        return None
    if len(value.elements) != len(target.elements):
        return None
    return [e.value for e in value.elements]


class _Bindings(cst.CSTVisitor):
    """What one scope binds: each name's bindings into ``resolver``; each attribute
    -> EVENT or STREAM when every binding of it is a call that makes one,
    "events"/"streams" for a list or tuple of them, None when anything else is."""

    def __init__(self, objects: "CudaObjects", resolver=None) -> None:
        self.kind_of_call = objects.kind_of_call
        self.resolver: Optional[Resolver] = resolver  # None: attributes only
        self.attributes: Kinds = {}
        self.comprehensions = 0  # how many the visit is in

    def _kind(self, value: Optional[cst.BaseExpression]) -> Optional[str]:
        kind = literal(self.kind_of_call, value, self._kind)
        return None if kind == EMPTY else kind

    def _name(self, key: str, source: Optional[Source]) -> None:
        if self.resolver is not None:
            found = self.resolver.sources.setdefault(key, [])
            found.append(source or (lambda r: None))

    def _attribute(self, key: str, kind: Optional[str]) -> None:
        table = self.attributes
        table[key] = kind if table.get(key, kind) == kind else None

    def bind(self, target: cst.CSTNode, value: Optional[cst.BaseExpression]) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            values = _paired(target, value)
            if values is None and value is not None:  # a, b = events
                self.bind_shape(target, lambda r: r.value(value))
                return
            for i, element in enumerate(target.elements):
                starred = isinstance(element, cst.StarredElement)
                self.bind(element.value, values[i] if values and not starred else None)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, None)
        elif isinstance(target, cst.Name):
            self._name(
                target.value, None if value is None else lambda r: r.value(value)
            )
        elif isinstance(target, cst.Attribute):
            self._attribute(target.attr.value, self._kind(value))

    def bind_shape(self, target: cst.CSTNode, source: Optional[Source]) -> None:
        """``target`` bound to what ``source`` gives, unpacked as it says."""
        if isinstance(target, (cst.Tuple, cst.List)):
            count = len(target.elements)
            for i, element in enumerate(target.elements):
                if isinstance(element, cst.StarredElement) or source is None:
                    self.bind_shape(element.value, None)
                else:
                    part = lambda r, i=i, s=source: pick(s(r), i, count)  # noqa: E731
                    self.bind_shape(element.value, part)
        elif isinstance(target, cst.StarredElement):
            self.bind_shape(target.value, None)
        elif isinstance(target, cst.Name):
            self._name(target.value, source and (lambda r: single(source(r))))
        elif isinstance(target, cst.Attribute):
            self._attribute(target.attr.value, None)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self.bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.bind(node.target, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        # In a comprehension, its value may read the comprehension's own names.
        self.bind(node.target, None if self.comprehensions else node.value)

    def _enter(self, node) -> None:
        self.comprehensions += 1

    def _leave(self, node) -> None:
        self.comprehensions -= 1

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _enter
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave

    def visit_For(self, node: cst.For) -> None:
        counts = isinstance(node.iter, cst.Call) and is_name(node.iter.func, "range")
        if counts and isinstance(node.target, cst.Name):
            self.bind(node.target, cst.Integer("0"))  # an int, whatever its value
        elif node.asynchronous is None:
            self.bind_shape(node.target, lambda r: r.element(node.iter))
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

    The passes see a statement that calls one of ``METHODS`` with the whole
    top-level statement around it (``CudaRuntime.CONTEXT``): a function's names
    come from the function, whole. Module-level names come from the top-level
    statements seen before; a module-level list only where every line naming it
    is one of those (a statement torchport does not parse could fill it).
    """

    def __init__(self, qualified_name, bound=frozenset(), source="") -> None:
        self.qualified_name = qualified_name  # of a name, or of a call's callee
        self.bound = bound  # names the module binds (a builtin it shadows)
        self.source = source  # the whole file
        self.module = Resolver(self, lambda key: None)  # from top-level chunks
        self.module.uses = Uses(self.is_builtin)
        self.module.visible = self._visible
        self.attributes: Kinds = {}
        # [is_class, node, its Resolver or None until asked] of the enclosing defs
        self.scopes: List[list] = []
        self.top_level = False
        # Chunks not read yet: most never ask what an object is, and reading a
        # chunk walks all of it.
        self.unread: List[Tuple[cst.Module, bool, Tuple[int, str]]] = []
        self.spans: List[Tuple[int, int]] = []  # the top-level chunks read
        self.lines: Optional[List[int]] = None  # where each line of the file starts
        # A comprehension's targets where they are read, and what they are.
        self.comprehensions: Dict[cst.Name, Optional[cst.CSTNode]] = {}
        self.comprehension_kinds: Dict[cst.CSTNode, Resolver] = {}
        self.builtins: Dict[str, bool] = {}

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

    def is_builtin(self, name: str) -> bool:
        """``zip``, ``len``: the builtin, neither bound nor imported here."""
        if name not in self.builtins:
            imported = self.qualified_name(cst.Name(name)) is not None
            self.builtins[name] = name not in self.bound and not imported
        return self.builtins[name]

    def enter_chunk(self, module: cst.Module, top_level: bool, offset=0, text=""):
        """A chunk of the file, ``text``, after its first ``offset`` lines."""
        self.scopes = []
        self.top_level = top_level
        self.unread.append((module, top_level, (offset, text)))
        self.comprehensions = {}
        self.comprehension_kinds = {}

    def _read_chunks(self) -> None:
        """The bindings of the chunks entered so far, in file order."""
        if not self.unread:
            return
        for module, top_level, (offset, text) in self.unread:
            attributes = _Attributes(self)
            module.visit(attributes)
            for key, kind in attributes.attributes.items():
                table = self.attributes
                table[key] = kind if table.get(key, kind) == kind else None
            if top_level:
                module.visit(_Bindings(self, self.module))
                module.visit(self.module.uses)  # type: ignore[arg-type]
                self.spans.append((offset + 1, offset + len(split_lines(text))))
        self.unread = []
        self.module.done = {}  # what the new chunks bind may change any name

    def _visible(self, key: str) -> bool:
        """Every line naming ``key`` is in a top-level chunk read."""
        if not self.source:
            return False
        if self.lines is None:
            starts = [m.end() for m in re.finditer(r"\r\n|\r|\n", self.source)]
            self.lines = [0] + starts
        for match in re.finditer(r"\b%s\b" % re.escape(key), self.source):
            line = bisect.bisect_right(self.lines, match.start())
            if not any(first <= line <= last for first, last in self.spans):
                return False
        return True

    def enter_scope(self, node, is_class: bool) -> None:
        self.scopes.append([is_class, node, None])

    def leave_scope(self) -> None:
        self.scopes.pop()

    def enter_comprehension(self, node: cst.CSTNode) -> None:
        self.comprehensions.update(comprehension_names(node))

    def _resolver(self, index: int) -> Resolver:
        scope = self.scopes[index]
        if scope[2] is None:
            is_class, node = scope[0], scope[1]
            resolver = Resolver(
                self, lambda key: self._name(key, index), containers=not is_class
            )
            names = _Bindings(self, resolver)
            parts = [node.params, node.body] if not is_class else [node.body]
            for part in parts:
                part.visit(names)
            resolver.parts = parts  # walked for its lists' uses once one is asked
            scope[2] = resolver
        return scope[2]

    def _comprehension(self, node) -> Resolver:
        """The kinds of a comprehension's targets; its first iterable is read in
        the scope around it."""
        resolver = self.comprehension_kinds.get(node)
        if resolver is None:
            resolver = Resolver(self, self._name)
            around = Resolver(self, self._name)
            names = _Bindings(self, resolver)
            comp_for, reads = node.for_in, around
            while comp_for is not None:
                if comp_for.asynchronous is not None:
                    names.bind_shape(comp_for.target, None)
                else:
                    source = lambda r, f=comp_for, by=reads: r.element(  # noqa: E731
                        f.iter, by
                    )
                    names.bind_shape(comp_for.target, source)
                comp_for, reads = comp_for.inner_for_in, None
            self.comprehension_kinds[node] = resolver
        return resolver

    def _name(self, name: str, upto: Optional[int] = None) -> Optional[str]:
        """What ``name`` is where the pass is, or read from the scope ``upto``
        encloses (a class body is not a scope of its methods)."""
        end = len(self.scopes) if upto is None else upto
        for index in range(end - 1, -1, -1):
            if self.scopes[index][0] and (upto is not None or index < end - 1):
                continue
            resolver = self._resolver(index)
            if name in resolver.sources:
                return resolver.name(name)
        self._read_chunks()
        return self.module.name(name) if self.top_level else None

    def kind(self, node: cst.CSTNode) -> Optional[str]:
        """EVENT, STREAM (or their plural) for an expression known to be one."""
        if isinstance(node, cst.Call):
            return self.kind_of_call(node)
        if isinstance(node, cst.Integer):
            return INT
        if self.qualified_name(node):  # an imported name (`torch.cuda`): not an object
            return None
        if isinstance(node, cst.Name):
            if node in self.comprehensions:
                comprehension = self.comprehensions[node]
                if comprehension is None:  # a lambda's parameter
                    return None
                return self._comprehension(comprehension).name(node.value)
            return self._name(node.value)
        if isinstance(node, cst.Attribute):
            self._read_chunks()
            return self.attributes.get(node.attr.value)
        if isinstance(node, cst.Subscript):
            return subscripted(self.kind(node.value), node)
        return None
