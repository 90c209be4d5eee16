"""One libcst traversal of a chunk by every active pass, visiting only what holds a site.

A chunk is the smallest statement around some lines that can hold a site
(``codemod.rewrite.chunks``), but that statement can be a long function whose header mentions
CUDA. Inside it, ``ast`` already told us every statement's lines: statements whose
lines hold no hit are skipped whole (their children are never visited), so a
1,500-line function with three sites costs about three statements, not its 20,000
nodes. A statement that holds a hit is visited whole, with everything the passes
need around a site (a call's arguments, an ``if`` and its body).
"""

from __future__ import annotations

import ast
import functools
import re
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from codemod.model.lines import LineSet, Spans
from codemod.rewrite.chunks import blocks
from codemod.passes import kept_for_cuda
from codemod.passes.base import FileContext, Pass
from codemod.passes.parens import BARE_CHILD

Span = Tuple[int, int]  # first and last line in the file, inclusive


class SharedTraversal(cst.CSTTransformer):
    """Runs several passes in one traversal, with each pass seeing what it would see
    alone: at each node the passes run in order, each given the node as the previous
    one left it (once a pass replaces a node by one of another type, the passes after
    it leave that node alone), and a pass whose visit returns False skips the node's
    children on its own.

    ``outside`` holds the statements no pass needs to see (no hit in their lines):
    none of the passes visits them or anything in them.
    """

    def __init__(
        self,
        passes: Sequence[Pass],
        outside: Set[cst.CSTNode] = frozenset(),
        positions=None,  # StatementPositions, told which statements it is in
        bare: Optional[Set[cst.CSTNode]] = None,
        context: Optional[FileContext] = None,
    ) -> None:
        super().__init__()
        self.passes = passes
        self.outside = outside
        # Expressions in a position that needs no parentheses, recorded as the
        # traversal goes down (codemod.passes.parens), before any pass sees them.
        self.bare = bare
        self.positions = positions  # told which statements the traversal is in
        # Where CUDA tests must stay as written (codemod.passes.kept_for_cuda),
        # marked as the traversal goes down, before any pass decides on them.
        self.context = context
        self.skipping: Dict[int, cst.CSTNode] = {}  # pass index -> node it skips under
        # The hooks by node type, each with its pass's index, in pass order: libcst's
        # own dispatch looks up every pass's visit_X and leave_X on every node, and
        # every node's every attribute, and mostly finds the empty ones each libcst
        # transformer inherits; here a node meets only the passes that hook it.
        self.visits: Dict[str, List[Tuple[int, Callable]]] = {}
        self.leaves: Dict[str, List[Tuple[int, Callable]]] = {}
        self.attribute_hooks: Dict[str, List[Tuple[int, Callable]]] = {}
        for i, p in enumerate(passes):
            visits, leaves, attributes = _hooks(type(p))
            for node, name in visits:
                self.visits.setdefault(node, []).append((i, getattr(p, name)))
            for node, name in leaves:
                self.leaves.setdefault(node, []).append((i, getattr(p, name)))
            for name in attributes:
                self.attribute_hooks.setdefault(name, []).append((i, getattr(p, name)))
        self.current: Optional[Pass] = None  # the pass running, to name it on a crash
        # Each statement visited -> what the passes made of it.
        self.built: Dict[cst.CSTNode, cst.CSTNode] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node in self.outside:
            return False
        if self.positions is not None:
            self.positions.enter(node)
        kind = type(node).__name__
        if self.bare is not None:
            child = BARE_CHILD.get(kind)
            if child is not None:
                self.bare.add(child(node))
        if self.context is not None and kind in kept_for_cuda.MARKED:
            kept_for_cuda.mark(node, self.context, self.passes[0].qualified_name)
        skipping = self.skipping
        for i, visit in self.visits.get(kind, ()):
            if i in skipping:
                continue
            self.current = self.passes[i]
            if visit(node) is False:
                skipping[i] = node
        return True

    def on_leave(self, original_node, updated_node):
        if original_node in self.outside:
            return updated_node
        skipping = self.skipping
        if skipping:  # a pass that skipped this node's children leaves it as usual
            for i in [i for i, under in skipping.items() if under is original_node]:
                del skipping[i]
        kind = type(original_node)
        for i, leave in self.leaves.get(kind.__name__, ()):
            if i in skipping:
                continue  # inside a node this pass skips
            if type(updated_node) is not kind:
                break  # replaced by another kind of node: the later passes leave it
            self.current = self.passes[i]
            updated_node = leave(original_node, updated_node)
        if isinstance(original_node, cst.BaseStatement):
            self.built[original_node] = updated_node
        if self.positions is not None:
            self.positions.leave(original_node)
        return updated_node

    def on_visit_attribute(self, node, attribute) -> None:
        self._attribute_hook("visit", node, attribute)

    def on_leave_attribute(self, original_node, attribute) -> None:
        self._attribute_hook("leave", original_node, attribute)

    def _attribute_hook(self, when: str, node, attribute) -> None:
        if not self.attribute_hooks:
            return
        name = f"{when}_{type(node).__name__}_{attribute}"
        for i, hook in self.attribute_hooks.get(name, ()):
            if i not in self.skipping:
                hook(node)


_HOOK = re.compile(r"(visit|leave)_([A-Z][A-Za-z]*)(_[a-z]\w*)?")


@functools.lru_cache(maxsize=None)  # a traversal is made per chunk; dir() is slow
def _hooks(cls: type):
    """The hooks ``cls`` defines, not the empty ones every libcst transformer
    inherits: ``visit_X`` and ``leave_X`` as (node type, method name) pairs, and
    the names of the attribute hooks (``visit_If_body``)."""
    if (cls.on_visit, cls.on_leave) != (
        cst.CSTTransformer.on_visit,
        cst.CSTTransformer.on_leave,
    ):
        raise TypeError(f"{cls.__name__} dispatches nodes itself: not supported")
    visits, leaves, attributes = [], [], []
    for name in dir(cls):
        match = _HOOK.fullmatch(name)
        if match is None or getattr(cls, name) is getattr(
            cst.CSTTransformer, name, None
        ):
            continue
        when, node, attribute = match.groups()
        if attribute:
            attributes.append(name)
        else:
            (visits if when == "visit" else leaves).append((node, name))
    return tuple(visits), tuple(leaves), tuple(attributes)


# -- which statements hold no hit ------------------------------------------------------
def outside(
    module: cst.Module,
    statements: Sequence[ast.stmt],
    hits: Set[int],
    lines: Sequence[str] = (),
) -> Set[cst.CSTNode]:
    """The statements of ``module`` whose lines hold no line of ``hits``.

    ``statements`` are the ``ast`` statements ``module`` was parsed from (file line
    numbers). Both trees list statements in the same order, so they are paired one by
    one; if the pairing does not hold up, nothing is skipped. An ``if`` or ``while``
    whose condition holds a hit is a guard, judged with everything it guards: nothing
    in it is skipped.
    """
    paired = list(pairs(module, statements))
    if any(node is None for node, _ in paired):
        return set()  # the trees disagree: visit everything
    ordered = LineSet(hits)  # a statement's hits in logarithmic time
    guards = Spans(
        _span(group[0]) for _, group in paired if _is_guard(group, ordered, lines)
    )
    skipped: Set[cst.CSTNode] = set()
    for node, group in paired:
        first, last = min(first_line_of(s) for s in group), max(_last(s) for s in group)
        if ordered.any_between(first, last) or first in guards:
            continue
        skipped.add(node)
    return skipped


def statement_nodes(
    module: cst.Module, statements: Sequence[ast.stmt]
) -> Optional[Dict[int, cst.CSTNode]]:
    """``id()`` of each ``ast`` statement -> the libcst statement that holds it (a line
    of simple statements holds several); None when the trees do not pair up."""
    found: Dict[int, cst.CSTNode] = {}
    for node, group in pairs(module, statements):
        if node is None:
            return None
        for stmt in group:
            found[id(stmt)] = node
    return found


def statement_ids(module: cst.Module) -> Set[int]:
    """``id()`` of every statement in ``module``, nested ones included."""
    return {id(node) for node, _ in _cst_order(module.body) if node is not None}


# What a guard's own lines say: a CUDA or availability test (`if args.cuda:`,
# `if torch.cuda.is_available():`), not just any hit (`if args.no_autocast:`).
_GUARD_TEST = re.compile(r"cuda|is_available")


def _is_guard(
    group: Sequence[ast.stmt], hits: LineSet, lines: Sequence[str] = ()
) -> bool:
    """An ``if``/``while`` with a hit in its own lines, not in its bodies', that
    tests CUDA or availability (every hit counts when ``lines`` is not given)."""
    if len(group) != 1 or not isinstance(group[0], (ast.If, ast.While)):
        return False
    here = hits.between(*_span(group[0]))
    if not here:
        return False
    nested = Spans(_span(s) for body in blocks(group[0]) for s in body)
    return any(
        line not in nested and (not lines or _GUARD_TEST.search(lines[line - 1]))
        for line in here
    )


def pairs(
    module: cst.Module, statements: Sequence[ast.stmt]
) -> Iterator[Tuple[Optional[cst.CSTNode], List[ast.stmt]]]:
    """Each libcst statement with its ``ast`` counterpart(s); a None node when the two
    trees stop matching."""
    flat = list(_ast_order(statements))
    position = 0
    for node, count in _cst_order(module.body):
        group = flat[position : position + count]
        position += count
        if len(group) != count or not _same_kind(node, group):
            yield None, []
            return
        if node is not None:
            yield node, group
    if position != len(flat):
        yield None, []


def _ast_order(statements: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, nested ones after their parent, in source order."""
    for stmt in statements:
        yield stmt
        for body in blocks(stmt):
            yield from _ast_order(body)


def _cst_order(
    body: Sequence[cst.CSTNode],
) -> Iterator[Tuple[Optional[cst.CSTNode], int]]:
    """(statement, how many ``ast`` statements it stands for), in source order.

    A line of simple statements (``a = 1; b = 2``) is one node for several ``ast``
    statements; the statements of a one-line body (``if x: a; b``) share the header's
    line and are not skipped on their own (None).
    """
    for node in body:
        if isinstance(node, cst.SimpleStatementLine):
            yield node, len(node.body)
        elif isinstance(node, cst.BaseSmallStatement):
            yield None, 1
        else:
            yield node, 1
            yield from _cst_nested(node)


def _cst_nested(node: cst.CSTNode) -> Iterator[Tuple[Optional[cst.CSTNode], int]]:
    # In ``ast``'s order: the body (handlers, cases), then ``else``, then ``finally``.
    blocks = [node.body] if hasattr(node, "body") else []  # not Match
    blocks += [h.body for h in getattr(node, "handlers", ())]
    blocks += [c.body for c in getattr(node, "cases", ())]
    for block in blocks:
        yield from _cst_order(block.body)
    orelse = getattr(node, "orelse", None)
    if isinstance(orelse, cst.If):  # elif: an If of its own in both trees
        yield orelse, 1
        yield from _cst_nested(orelse)
    elif orelse is not None:
        yield from _cst_order(orelse.body.body)
    finalbody = getattr(node, "finalbody", None)
    if finalbody is not None:
        yield from _cst_order(finalbody.body.body)


# libcst's compound statements with the ast types they stand for.
_KINDS = {
    cst.If: (ast.If,),
    cst.For: (ast.For, ast.AsyncFor),
    cst.While: (ast.While,),
    cst.With: (ast.With, ast.AsyncWith),
    cst.Try: (ast.Try,),
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.ClassDef: (ast.ClassDef,),
    cst.Match: (ast.Match,),
}
if hasattr(cst, "TryStar") and hasattr(ast, "TryStar"):
    _KINDS[cst.TryStar] = (ast.TryStar,)


def _same_kind(node: Optional[cst.CSTNode], group: Sequence[ast.stmt]) -> bool:
    if node is None or isinstance(node, cst.SimpleStatementLine):
        return not any(isinstance(s, _COMPOUND) for s in group)
    kinds = _KINDS.get(type(node))
    return kinds is not None and len(group) == 1 and isinstance(group[0], kinds)


_COMPOUND = tuple(kind for kinds in _KINDS.values() for kind in kinds)


def _span(stmt: ast.stmt) -> Span:
    return first_line_of(stmt), _last(stmt)


def first_line_of(stmt: ast.stmt) -> int:
    return min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])


def _last(stmt: ast.stmt) -> int:
    return stmt.end_lineno or stmt.lineno
