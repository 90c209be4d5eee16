"""Lists and tuples of CUDA events and streams (``starts = [torch.cuda.Event(...) for
_ in range(n)]``), for ``bindings``: what their elements are, and whether a scope
keeps them to itself.

A container is known to hold only events while every use of its name the pass sees
leaves it so: an element read (``starts[i]``, ``starts[1:]``), an iteration (``for s
in starts``, ``zip(starts, ends)``, ``enumerate``, ``reversed``, a comprehension),
``len(starts)``, ``starts.append(<event>)`` or ``starts[i] = <event>``. Any other use
(passed to a function, returned, aliased, stored, another method) may put something
else in it: the container is then unknown, and its elements are not followed.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set, Tuple, Union

import libcst as cst

from codemod.passes.runtime.tables import EVENT, INT, STREAM

PLURALS = {EVENT + "s", STREAM + "s"}  # a list or tuple of events, or of streams
EMPTY = "empty"  # `[]`: a list of anything appended later
# What iterating gives: a kind, or a tuple of them (zip, enumerate).
Shape = Union[None, str, Tuple["Shape", ...]]
Kinds = Dict[str, Optional[str]]
Source = Callable[["Resolver"], Shape]  # what one binding gives, once asked
ITERATORS = ("zip", "enumerate", "reversed")
DEPTH = 50  # names bound to names, followed this far


def plural(kind: Optional[str]) -> Optional[str]:
    """The kind of a container of ``kind``: "events" for events."""
    return kind + "s" if kind in (EVENT, STREAM) else None


def subscripted(kind: Optional[str], node: cst.Subscript) -> Optional[str]:
    """``x[i]`` of a container: its element kind; ``x[i:j]``: the container's."""
    if kind not in PLURALS or len(node.slice) != 1:
        return None
    index = node.slice[0].slice
    if isinstance(index, cst.Index) and index.star is None:
        return kind[:-1]
    return kind if isinstance(index, cst.Slice) else None


def pick(shape: Shape, index: int, count: int) -> Shape:
    """Element ``index`` of ``count`` when ``shape`` is unpacked."""
    if isinstance(shape, tuple):
        return shape[index] if len(shape) == count else None
    return shape[:-1] if shape in PLURALS else None  # a, b = events


def single(shape: Shape) -> Optional[str]:
    return shape if isinstance(shape, str) else None


def iterated(call: cst.BaseExpression, is_builtin) -> Optional[List[cst.Arg]]:
    """The arguments of ``zip(...)``, ``enumerate(x)``, ``reversed(x)`` (the
    builtins, not shadowed) that are iterated; None for anything else."""
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name):
        return None
    name = call.func.value
    if name not in ITERATORS or not is_builtin(name):
        return None
    args = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args) or not args:
        return None
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    if name == "zip" and keywords <= {"strict"}:
        return args
    if name == "enumerate" and len(args) + len(keywords) <= 2:
        return args[:1] if keywords <= {"start"} else None
    return args if name == "reversed" and len(args) == 1 and not keywords else None


def element(node: cst.BaseExpression, value, is_builtin) -> Shape:
    """What iterating ``node`` gives (``value``: the kind of an expression)."""
    args = iterated(node, is_builtin)
    if args is not None:
        shapes = tuple(element(a.value, value, is_builtin) for a in args)
        name = node.func.value  # type: ignore[attr-defined]
        if name == "enumerate":
            return (INT, shapes[0])
        return shapes if name == "zip" else shapes[0]
    kind = value(node)
    return kind[:-1] if kind in PLURALS else None


def _target_names(target: cst.CSTNode) -> List[cst.Name]:
    """The names a target binds (``s``, ``i, (s, e)``, ``*rest``)."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


def comprehension_names(node: cst.CSTNode) -> Dict[cst.Name, Optional[cst.CSTNode]]:
    """Each name in comprehension ``node`` that is one of its targets -> ``node``
    (None inside a lambda whose parameter it is). The first iterable is read outside
    the comprehension; a nested comprehension marks its own targets after this."""
    targets = set()
    first = node.for_in.iter  # type: ignore[attr-defined]
    comp_for = node.for_in  # type: ignore[attr-defined]
    while comp_for is not None:
        targets.update(n.value for n in _target_names(comp_for.target))
        comp_for = comp_for.inner_for_in
    found: Dict[cst.Name, Optional[cst.CSTNode]] = {}
    stack: List[Tuple[cst.CSTNode, Set[str]]] = [(node, set())]
    while stack:
        current, hidden = stack.pop()
        if current is first:
            continue
        if isinstance(current, cst.Name) and current.value in targets:
            found[current] = None if current.value in hidden else node
        if isinstance(current, cst.Lambda):
            hidden = hidden | {p.name.value for p in _lambda_params(current)}
        stack.extend((child, hidden) for child in current.children)
    return found


def _lambda_params(node: cst.Lambda) -> List[cst.Param]:
    p = node.params
    star = [p.star_arg] if isinstance(p.star_arg, cst.Param) else []
    kwargs = [p.star_kwarg] if p.star_kwarg is not None else []
    return [*p.posonly_params, *p.params, *star, *p.kwonly_params, *kwargs]


Item = Tuple[Optional[cst.BaseExpression], bool]  # what is put in, from a nested scope


class Uses(cst.CSTVisitor):
    """Walks a scope whole, nested functions and classes included (a closure can
    fill the list): the names used in a way that may change what a list holds
    (``escaped``), and what is put in each (``items``). A name is marked safe by the
    node around it before the walk reaches the name itself; a name bound by `:=`
    never is (the expression around it holds the same list)."""

    def __init__(self, is_builtin: Callable[[str], bool]) -> None:
        self.is_builtin = is_builtin
        self.safe: Set[cst.Name] = set()
        self.escaped: Set[str] = set()
        self.items: Dict[str, List[Item]] = {}
        self.depth = 0  # inside a nested function, class, lambda or comprehension

    def visit_Name(self, node: cst.Name) -> None:
        if node not in self.safe:
            self.escaped.add(node.value)

    def _bound(self, target: cst.CSTNode) -> None:
        self.safe.update(_target_names(target))

    def _put(self, target: cst.CSTNode, value: Optional[cst.BaseExpression]) -> None:
        """``x[i] = value`` puts ``value`` in ``x``; unpacked, each element."""
        if isinstance(target, (cst.Tuple, cst.List)):
            values = None
            if isinstance(value, (cst.Tuple, cst.List)) and not any(
                isinstance(e, cst.StarredElement) for e in value.elements
            ):
                if len(value.elements) == len(target.elements):
                    values = [e.value for e in value.elements]
            for i, element in enumerate(target.elements):
                starred = isinstance(element, cst.StarredElement)
                self._put(element.value, values[i] if values and not starred else None)
        elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            item = (value, self.depth > 0)
            self.items.setdefault(target.value.value, []).append(item)

    def _iterated(self, node: cst.BaseExpression) -> None:
        if isinstance(node, cst.Name):
            self.safe.add(node)
        for arg in iterated(node, self.is_builtin) or ():
            self._iterated(arg.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.safe.add(node.attr)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.safe.add(node.keyword)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if isinstance(node.value, cst.Name):
            self.safe.add(node.value)  # read, or a store `_put` notes

    def visit_Call(self, node: cst.Call) -> None:
        func, args = node.func, node.args
        alone = len(args) == 1 and args[0].keyword is None and not args[0].star
        if not alone:
            return
        if isinstance(func, cst.Name) and func.value == "len":
            if self.is_builtin("len") and isinstance(args[0].value, cst.Name):
                self.safe.add(args[0].value)
        elif isinstance(func, cst.Attribute) and func.attr.value == "append":
            if isinstance(func.value, cst.Name):
                self.safe.add(func.value)
                item = (args[0].value, self.depth > 0)
                self.items.setdefault(func.value.value, []).append(item)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if len(node.targets) == 1:
                self._bound(target.target)
            else:  # `a = b = []`: one list, filled through either name
                self.escaped.update(n.value for n in _target_names(target.target))
            self._put(target.target, node.value)
            if isinstance(target.target, (cst.Tuple, cst.List)):
                self._iterated(node.value)  # `a, b = pair` reads its elements

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bound(node.target)
        self._put(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bound(node.target)
        self._put(node.target, None)

    def visit_For(self, node: cst.For) -> None:
        self._bound(node.target)
        self._put(node.target, None)
        self._iterated(node.iter)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bound(node.target)
        self._put(node.target, None)
        self._iterated(node.iter)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bound(node.asname.name)
            self._put(node.asname.name, None)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bound(node.name.name)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        local = node.asname.name if node.asname else node.name
        while isinstance(local, cst.Attribute):
            local = local.value
        self._bound(local)

    def visit_Param(self, node: cst.Param) -> None:
        self.safe.add(node.name)

    def _enter(self, node: cst.CSTNode) -> None:
        name = getattr(node, "name", None)
        if isinstance(name, cst.Name):
            self.safe.add(name)
        self.depth += 1

    def _leave(self, node: cst.CSTNode) -> None:
        self.depth -= 1

    visit_FunctionDef = visit_ClassDef = visit_Lambda = _enter
    leave_FunctionDef = leave_ClassDef = leave_Lambda = _leave
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _enter
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave


def literal(kind_of_call, node, each) -> Optional[str]:
    """The kind of a call, an int, or a list or tuple written out (its elements'
    kinds by ``each``); EMPTY for ``[]``."""
    if isinstance(node, cst.Call):
        return kind_of_call(node)
    if isinstance(node, cst.Integer):
        return INT
    if isinstance(node, (cst.List, cst.Tuple)):
        if not node.elements:
            return EMPTY if isinstance(node, cst.List) else None
        if any(isinstance(e, cst.StarredElement) for e in node.elements):
            return None
        kinds = {each(e.value) for e in node.elements}
    elif isinstance(node, cst.ListComp):  # its element is read in its own scope
        kinds = {literal(kind_of_call, node.elt, lambda e: None)}
    else:
        return None
    return plural(kinds.pop() if len(kinds) == 1 else None)


class Resolver:
    """The kinds of one scope's names from their bindings (``sources``), resolved
    when asked, as a binding may read a name bound later in the scope (``for s in
    starts`` above an `append`). A name the scope does not bind is ``outer``'s."""

    def __init__(self, objects, outer, containers=True) -> None:
        self.objects = objects
        self.outer = outer
        self.containers = containers  # a class body's lists are attributes too
        self.visible = lambda key: True  # every use of the name can be seen
        self.sources: Dict[str, List[Source]] = {}
        self.uses: Optional[Uses] = None
        self.parts: List[cst.CSTNode] = []  # what ``uses`` walks, when first asked
        self.done: Kinds = {}
        self.busy: Set[str] = set()

    def name(self, key: str) -> Optional[str]:
        if key not in self.sources:
            return self.outer(key)
        if key not in self.done:
            if key in self.busy or len(self.busy) > DEPTH:
                return None  # bound through itself (or a chain too long): unknown
            self.busy.add(key)
            self.done[key] = self._merged(key)
            self.busy.discard(key)
        return self.done[key]

    def _merged(self, key: str) -> Optional[str]:
        kinds = {single(source(self)) for source in self.sources[key]}
        if not kinds <= PLURALS | {EMPTY}:
            return kinds.pop() if len(kinds) == 1 else None
        if not self.containers or not self.visible(key):
            return None
        if self.uses is None and self.parts:
            self.uses = Uses(self.objects.is_builtin)
            for part in self.parts:
                part.visit(self.uses)
        uses = self.uses
        if uses is None or key in uses.escaped:
            return None  # a list that may hold anything by now
        for value, nested in uses.items.get(key, ()):
            # Put in from a nested scope: its names are not this scope's.
            kind = self.literal(value) if nested else self.value(value)
            kinds.add(plural(kind))
        kinds.discard(EMPTY)
        return kinds.pop() if len(kinds) == 1 else None

    def literal(self, node) -> Optional[str]:
        kind = literal(self.objects.kind_of_call, node, self.literal)
        return None if kind == EMPTY else kind

    def value(self, node: Optional[cst.BaseExpression]) -> Optional[str]:
        if isinstance(node, cst.Name):
            return self.name(node.value)
        if isinstance(node, cst.Subscript):
            return subscripted(self.value(node.value), node)
        return literal(self.objects.kind_of_call, node, self.value)

    def element(self, node: cst.BaseExpression, reads=None) -> Shape:
        """What iterating ``node`` gives, its names read by ``reads``."""
        return element(node, (reads or self).value, self.objects.is_builtin)
