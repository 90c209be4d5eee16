"""Where reading the device would ask for the accelerator earlier than the original
program asked for CUDA.

The binding is an accessor, asked on first use: ``_DEVICE()`` queries the accelerator
where the rewritten code first reads the device. Where the original statement itself
touched CUDA (``x.cuda()``, ``torch.cuda.synchronize()``, ``.to("cuda")``), reading the
device there is exact. Where it did not (``device = "cuda"``, ``torch.device("cuda")``,
a ``"cuda"`` default argument, ``x.is_cuda``, a decorator), the rewrite would query the
accelerator at a moment the original did not, which matters:

- at import time: the accessor is to find the device on first use, not in every
  importer of a library module (below torch 2.8 ``torch.cuda.is_available()``
  initialises the CUDA driver and poisons ``fork``; on other accelerators the count
  may start the runtime); so a read at import (a module constant, a class
  attribute, a default, a decorator's argument, the body of a function the import
  calls) is early unless the module's import-time code touched CUDA before it, or
  touches it later with nothing in between that the query would change; a lambda's
  body runs when it is called (``lambda_bodies``);
- before a statement the query would change: a write of ``CUDA_VISIBLE_DEVICES`` (or
  another variable that selects devices), a ``fork``, a process started from a fork.

``early_reads`` lists the statements where a read is early; a fix that reads the
device there is not applied by default (``Pass.record_and_decide``).
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from codemod.passes.names import ModuleFacts
from codemod.rewrite.device.touching import (
    FORKING,
    LEGACY_TYPE,
    TOUCHING,
    TOUCHING_ELSEWHERE,
    disabled,
    is_environ,
    names_cuda,
    names_other_device,
    selection_key,
)

Span = Tuple[int, int]  # a statement's first and last line
Region = Tuple[Tuple[int, int], Tuple[int, int]]  # (line, column) of start, end

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def early_reads(
    tree: ast.Module, facts: ModuleFacts, initialising: bool = True
) -> List[Span]:
    """The statements (spans of lines) where reading the device is early.

    A read at import is early whatever the target: the accessor promises to ask
    for the device on first use, and an importer that never uses it must not have
    it counted (on an accelerator other than CUDA the count may start its runtime).
    ``initialising``: the accessor's question initialises CUDA (torch < 2.8), so
    reads before a fork are early too; reads before a write that selects devices
    always are (the count asked first would be stale)."""
    found: List[Span] = []
    touch = _Touch(facts, _cuda_names(tree), tree, initialising)
    _block(tree.body, touch, found, import_time=True, touched=False)
    return found


def lambda_bodies(tree: ast.Module, lines: Sequence[str]) -> List[Region]:
    """Where each lambda's body is: it runs when the lambda is called, never where
    the lambda is made (``field(default_factory=lambda: torch.device("cuda"))``), so
    a read there is no read at import. Columns count characters from 1."""

    def column(line: int, offset: int) -> int:
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return len(text.encode("utf-8")[:offset].decode("utf-8", "replace")) + 1

    found: List[Region] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda):
            body = node.body
            end = body.end_lineno or body.lineno
            start = (body.lineno, column(body.lineno, body.col_offset))
            found.append((start, (end, column(end, body.end_col_offset or 0))))
    return found


def _cuda_names(tree: ast.Module) -> Set[str]:
    """Names the module assigns a CUDA device to (``device = "cuda"``,
    ``dev = torch.device("cuda" if ... else "cpu")``): a tensor moved to one of them
    touches CUDA where the value is CUDA, which is where the rewrite reads it."""
    names: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if _may_be_cuda(node.value):
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _may_be_cuda(node: ast.AST) -> bool:
    if isinstance(node, ast.IfExp):
        return _may_be_cuda(node.body) or _may_be_cuda(node.orelse)
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        return isinstance(first, ast.Constant) and str(first.value).startswith("cuda")
    return names_cuda(node)


class _Touch:
    """What the module knows that tells a CUDA touch: its names, its CUDA names, and
    which of its own functions touch CUDA when called."""

    def __init__(
        self,
        facts: ModuleFacts,
        cuda_names: Set[str],
        tree: ast.Module,
        initialising: bool,
    ) -> None:
        self.facts = facts
        self.cuda_names = cuda_names
        self.initialising = initialising
        self.functions = {
            s.name: s
            for s in tree.body
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.touching: Dict[str, bool] = {}
        self.marked: Set[str] = set()  # functions whose bodies read at import

    def function_touches(self, name: str) -> bool:
        """Whether calling the module's function ``name`` touches CUDA (through the
        module's other functions too)."""
        if name not in self.touching:
            self.touching[name] = False  # a recursive call adds nothing
            body = self.functions[name].body
            self.touching[name] = any(_touches(s, self) for s in _in_order(body))
        return self.touching[name]

    def reached(self, stmt: ast.stmt) -> List[ast.stmt]:
        """The module's functions that running ``stmt`` calls, through one another:
        their bodies run when ``stmt`` does. One passed by name to a call may be
        called there too (``torch.jit.trace(f, inputs)``, ``model.apply(init)``).
        Each is given once (``marked``)."""
        seen: Dict[str, ast.stmt] = {}
        stack = _called(_own_nodes(stmt, lambdas=True))
        while stack:
            name = stack.pop()
            if name in self.marked or name not in self.functions:
                continue
            self.marked.add(name)
            seen[name] = self.functions[name]
            stack.extend(_called(ast.walk(self.functions[name])))
        return list(seen.values())

    def device(self, node: ast.AST) -> bool:
        """``node`` is a CUDA device: written out, or a name the module gave one."""
        return names_cuda(node) or (
            isinstance(node, ast.Name) and node.id in self.cuda_names
        )


def _called(nodes: Iterable[ast.AST]) -> List[str]:
    """The names called, or passed by name to a call, among ``nodes``."""
    names = []
    for node in nodes:
        if isinstance(node, ast.Call):
            passed = [*node.args, *(k.value for k in node.keywords)]
            names += [n.id for n in [node.func, *passed] if isinstance(n, ast.Name)]
    return names


def _block(
    body: Sequence[ast.stmt],
    touch: _Touch,
    found: List[Span],
    import_time: bool,
    touched: bool,
) -> None:
    """Judge each statement of a block that runs in order (a module's import, a
    function body, a script's ``__main__`` block), nested blocks included."""
    flat = list(_in_order(body))
    events = [(_touches(s, touch), _sensitive(s, touch)) for s in flat]
    ahead = _ahead(events)
    for index, stmt in enumerate(flat):
        touches, _ = events[index]
        if not touches and not touched:
            sensitive, touch_later = ahead[index]
            if sensitive or (import_time and not touch_later):
                span = _header_span(stmt)
                found.extend([span] if span else [])
                # The module's functions it calls read the device at this moment.
                for function in touch.reached(stmt) if import_time else ():
                    spans = (_header_span(s) for s in _in_order(function.body))
                    found.extend(span for span in spans if span)
        # Once the block has touched CUDA, a later query changes nothing.
        touched = touched or touches
        for inner, inner_import in _inner_blocks(stmt, import_time):
            # A function runs when called: what its module touched before is no
            # proof for its body. A class body runs on, in its module's import.
            _block(inner, touch, found, inner_import, touched and inner_import)


def _ahead(events: Sequence[Tuple[bool, bool]]) -> List[Tuple[bool, bool]]:
    """Per statement: a sensitive one before the next touch?, a touch after it?"""
    found: List[Tuple[bool, bool]] = (
        []
    )  # one pass from the end, not one look ahead each
    sensitive = touch_later = False
    for touches, is_sensitive in reversed(events):
        found.append((sensitive, touch_later))
        if touches:
            sensitive, touch_later = False, True
        else:
            sensitive = sensitive or is_sensitive
    found.reverse()
    return found


def _in_order(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a block in the order they run, a compound statement's
    header (itself) before the statements of its blocks; function and class
    bodies and a ``__main__`` block are blocks of their own."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (*_FUNCTIONS, ast.ClassDef)) or _is_main(stmt):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _in_order(getattr(stmt, field, []) or [])
        for handler in getattr(stmt, "handlers", []) or []:
            yield from _in_order(handler.body)


def _inner_blocks(stmt: ast.stmt, import_time: bool):
    """Blocks that run at another time: a function's body (when called), a class
    body (at import, as its module), a script's ``__main__`` block (as a program)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        yield stmt.body, False
    elif isinstance(stmt, ast.ClassDef):
        yield stmt.body, import_time
    elif _is_main(stmt):
        yield stmt.body, False


def _is_main(stmt: ast.stmt) -> bool:
    """``if __name__ == "__main__":``: runs when the file is a program, not on import."""
    test = getattr(stmt, "test", None)
    return (
        isinstance(stmt, ast.If)
        and isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _roots(stmt: ast.stmt) -> List[ast.AST]:
    """The expressions a statement evaluates itself (all of it for a simple one)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        roots: List[ast.AST] = list(stmt.decorator_list)
        if isinstance(stmt, ast.ClassDef):
            return roots + stmt.bases + [k.value for k in stmt.keywords]
        return roots + stmt.args.defaults + [d for d in stmt.args.kw_defaults if d]
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter, stmt.target]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        items = [i.context_expr for i in stmt.items]
        return items + [i.optional_vars for i in stmt.items if i.optional_vars]
    if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        return []
    if isinstance(stmt, ast.Match):
        return [stmt.subject]
    return [stmt]


def _own_nodes(stmt: ast.stmt, lambdas: bool = False) -> Iterator[ast.AST]:
    """The nodes a statement evaluates itself: for a compound statement its header
    (test, iterable, context managers, decorators, defaults), not its blocks; with
    ``lambdas``, the bodies of its lambdas too (a read there runs when the lambda
    does, as the original's touch there did)."""
    stack = _roots(stmt)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _FUNCTIONS) or (
            lambdas and isinstance(node, ast.Lambda)
        ):
            stack.extend(ast.iter_child_nodes(node))


def _touches(stmt: ast.stmt, touch: _Touch) -> bool:
    """Whether the statement, as the original wrote it, queries or initialises CUDA."""
    facts = touch.facts
    for node in _own_nodes(stmt, lambdas=True):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id in touch.functions:
            if touch.function_touches(node.func.id):
                return True
        name = facts.qualified_name(node.func) or ""
        if name.startswith("torch.cuda.") and name[len("torch.cuda.") :] in TOUCHING:
            return True
        if name in TOUCHING_ELSEWHERE and not (
            names_other_device(node) or disabled(node)
        ):
            return True
        if LEGACY_TYPE.fullmatch(name) or any(
            LEGACY_TYPE.fullmatch(facts.qualified_name(a) or "") for a in node.args
        ):
            return True  # a CUDA tensor made, or a tensor moved to CUDA (`.type()`)
        method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        if method in ("cuda", "pin_memory"):
            return True
        if method == "to" and any(touch.device(a) for a in node.args):
            return True
        if _makes_on_device(node, name, touch) and any(
            k.arg in ("device", "map_location") and touch.device(k.value)
            for k in node.keywords
        ):
            return True
        if name == "torch.set_default_device" and node.args:
            if touch.device(node.args[0]):
                return True  # the next tensor made is a CUDA tensor
        if name in ("torch.autocast", "torch.amp.autocast") and node.args:
            if touch.device(node.args[0]):
                return True
    return False


def _makes_on_device(call: ast.Call, name: str, touch: _Touch) -> bool:
    """Whether a CUDA device given to ``call`` is where it makes or moves a tensor:
    a torch callable or a method (``torch.zeros(..., device=...)``,
    ``model.to(device=...)``); not one of the module's own functions (its body says
    whether it touches CUDA) nor another module's, which may only keep the name."""
    if isinstance(call.func, ast.Name) and call.func.id in touch.functions:
        return False
    return name.startswith("torch.") or (
        not name and isinstance(call.func, ast.Attribute)
    )


def _sensitive(stmt: ast.stmt, touch: _Touch) -> bool:
    """Whether a query before the statement would change what it does: it writes a
    variable that selects devices, or forks (when the query initialises CUDA)."""
    facts = touch.facts
    for node in _own_nodes(stmt):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            if is_environ(node.value, facts) and selection_key(node.slice):
                return True
        if not isinstance(node, ast.Call):
            continue
        name = facts.qualified_name(node.func) or ""
        if name in FORKING and touch.initialising:
            return True
        if name in ("os.putenv", "os.environ.setdefault") and node.args:
            if selection_key(node.args[0]):
                return True
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in ("update", "setdefault")
            and is_environ(func.value, facts)
        ):
            keys = [k for a in node.args if isinstance(a, ast.Dict) for k in a.keys]
            keys += [ast.Constant(k.arg) for k in node.keywords if k.arg]
            keys += node.args[:1] if func.attr == "setdefault" else []
            if any(k is not None and selection_key(k) for k in keys):
                return True
    return False


def _header_span(stmt: ast.stmt) -> Optional[Span]:
    """The lines of what the statement evaluates itself (a compound statement's
    decorators, defaults, test, iterable or context managers; not its blocks, even
    one on its header's line); None when it evaluates nothing."""
    roots = _roots(stmt)
    if not roots:
        return None
    first = min(r.lineno for r in roots)
    return first, max(r.end_lineno or r.lineno for r in roots)
