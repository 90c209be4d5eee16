"""Where reading the device would ask for the accelerator earlier than the original
program asked for CUDA.

The binding is an accessor, asked on first use: ``_DEVICE()`` queries the accelerator
where the rewritten code first reads the device. Where the original statement itself
touched CUDA (``x.cuda()``, ``torch.cuda.synchronize()``, ``.to("cuda")``), reading the
device there is exact. Where it did not (``device = "cuda"``, ``torch.device("cuda")``,
a ``"cuda"`` default argument, ``x.is_cuda``, a decorator), the rewrite would query the
accelerator at a moment the original did not, which matters:

- at import time: ``torch.cuda.is_available()`` initialises the CUDA driver and
  poisons ``fork`` for every importer of a library module; so a read at import is
  early unless the module's import-time code touched CUDA before it, or touches it
  later with nothing in between that the query would change;
- before a statement the query would change: a write of ``CUDA_VISIBLE_DEVICES`` (or
  another variable that selects devices), a ``fork``, a process started from a fork.

``early_reads`` lists the statements where a read is early; a fix that reads the
device there is not applied by default (``Pass.record_and_decide``).
"""

from __future__ import annotations

import ast
import re
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

from codemod.passes.names import ModuleFacts

Span = Tuple[int, int]  # a statement's first and last line

# torch.cuda functions and classes that query or initialise CUDA when called, as
# torch 2.13's source shows (tests/test_timing.py reads it again): they call
# _lazy_init, is_available, device_count or current_device, or enter a device
# context, themselves or through one another. The others (manual_seed,
# memory_allocated, empty_cache, Event, nvtx, ...) are lazy or answer without CUDA.
TOUCHING = {
    "is_available",
    "device_count",
    "current_device",
    "set_device",  # torch._C._cuda_setDevice initialises CUDA (compiled code)
    "device",
    "synchronize",
    "get_device_name",
    "get_device_properties",
    "get_device_capability",
    "is_bf16_supported",
    "mem_get_info",
    "init",
    "Stream",
    "ExternalStream",
    "StreamContext",
    "stream",
    "current_stream",
    "default_stream",
    "get_rng_state",
    "get_rng_state_all",
    "set_rng_state",
    "initial_seed",
    "caching_allocator_alloc",
    "can_device_access_peer",
    "cudart",
    "current_blas_handle",
    "current_solver_handle",
    "get_per_process_memory_fraction",
    "set_per_process_memory_fraction",
    "get_stream_from_external",
    "get_sync_debug_mode",
    "set_sync_debug_mode",
    "ipc_collect",
    "use_mem_pool",
}
# Other callables that ask whether CUDA is available (a CUDA scaler or autocast
# warns when it is not); torch.autocast only with a CUDA device type.
TOUCHING_ELSEWHERE = {
    "torch.cuda.amp.GradScaler",
    "torch.cuda.amp.autocast",
    "torch.amp.GradScaler",
    "torch.GradScaler",
    "torch.random.fork_rng",  # counts the devices, saves their generators' states
}
# Variables that select which devices a process sees: read when CUDA initialises.
DEVICE_SELECTION = {
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "NVIDIA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "ZE_AFFINITY_MASK",
    "PYTORCH_NVML_BASED_CUDA_CHECK",
}
FORKING = {
    "os.fork",
    "os.forkpty",
    "multiprocessing.Process",
    "multiprocessing.Pool",
    "multiprocessing.set_start_method",
    "torch.multiprocessing.Process",
    "torch.multiprocessing.Pool",
    "torch.multiprocessing.set_start_method",
    "concurrent.futures.ProcessPoolExecutor",
}
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_LEGACY_TYPE = re.compile(r"torch\.cuda\.[A-Z]\w*Tensor")


def early_reads(
    tree: ast.Module, facts: ModuleFacts, initialising: bool = True
) -> List[Span]:
    """The statements (spans of lines) where reading the device is early.

    ``initialising``: the accessor's question initialises CUDA (torch < 2.8), so
    reads at import and before a fork are early too; otherwise only reads before
    a write that selects devices are (the count asked first would be stale)."""
    found: List[Span] = []
    touch = _Touch(facts, _cuda_names(tree), tree, initialising)
    _block(tree.body, touch, found, import_time=initialising, touched=False)
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
    return _names_cuda(node)


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

    def function_touches(self, name: str) -> bool:
        """Whether calling the module's function ``name`` touches CUDA (through the
        module's other functions too)."""
        if name not in self.touching:
            self.touching[name] = False  # a recursive call adds nothing
            body = self.functions[name].body
            self.touching[name] = any(_touches(s, self) for s in _in_order(body))
        return self.touching[name]

    def device(self, node: ast.AST) -> bool:
        """``node`` is a CUDA device: written out, or a name the module gave one."""
        return _names_cuda(node) or (
            isinstance(node, ast.Name) and node.id in self.cuda_names
        )


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
                found.append(_header_span(stmt))
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


def _own_nodes(stmt: ast.stmt, lambdas: bool = False) -> Iterator[ast.AST]:
    """The nodes a statement evaluates itself: for a compound statement its header
    (test, iterable, context managers, decorators, defaults), not its blocks; with
    ``lambdas``, the bodies of its lambdas too (a read there runs when the lambda
    does, as the original's touch there did)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        roots: List[ast.AST] = list(stmt.decorator_list)
        if isinstance(stmt, ast.ClassDef):
            roots += stmt.bases + [k.value for k in stmt.keywords]
        else:
            roots += stmt.args.defaults + [d for d in stmt.args.kw_defaults if d]
    elif isinstance(stmt, (ast.If, ast.While)):
        roots = [stmt.test]
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        roots = [stmt.iter, stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        roots = list(stmt.items)
    elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        roots = []
    elif isinstance(stmt, ast.Match):
        roots = [stmt.subject]
    else:
        roots = [stmt]
    stack = list(roots)
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
        if name in TOUCHING_ELSEWHERE and not _names_other_device(node):
            return True
        if _LEGACY_TYPE.fullmatch(name) or any(
            _LEGACY_TYPE.fullmatch(facts.qualified_name(a) or "") for a in node.args
        ):
            return True  # a CUDA tensor made, or a tensor moved to CUDA (`.type()`)
        method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        if method in ("cuda", "pin_memory"):
            return True
        if method == "to" and any(touch.device(a) for a in node.args):
            return True
        if any(
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


def _names_cuda(node: ast.AST) -> bool:
    """A CUDA device written out: ``"cuda"``, ``"cuda:1"``, ``torch.device("cuda")``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value == "cuda" or node.value.startswith("cuda:")
    if isinstance(node, ast.Call) and node.args:
        return _names_cuda(node.args[0])
    return False


def _names_other_device(call: ast.Call) -> bool:
    """A scaler made for a device written out that is not CUDA (``"cpu"``)."""
    first = call.args[0] if call.args else None
    for keyword in call.keywords:
        if keyword.arg == "device":
            first = keyword.value
    return (
        isinstance(first, ast.Constant)
        and isinstance(first.value, str)
        and not _names_cuda(first)
    )


def _sensitive(stmt: ast.stmt, touch: _Touch) -> bool:
    """Whether a query before the statement would change what it does: it writes a
    variable that selects devices, or forks (when the query initialises CUDA)."""
    facts = touch.facts
    for node in _own_nodes(stmt):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            if _is_environ(node.value, facts) and _selection_key(node.slice):
                return True
        if not isinstance(node, ast.Call):
            continue
        name = facts.qualified_name(node.func) or ""
        if name in FORKING and touch.initialising:
            return True
        if name in ("os.putenv", "os.environ.setdefault") and node.args:
            if _selection_key(node.args[0]):
                return True
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in ("update", "setdefault")
            and _is_environ(func.value, facts)
        ):
            keys = [k for a in node.args if isinstance(a, ast.Dict) for k in a.keys]
            keys += [ast.Constant(k.arg) for k in node.keywords if k.arg]
            keys += node.args[:1] if func.attr == "setdefault" else []
            if any(k is not None and _selection_key(k) for k in keys):
                return True
    return False


def _is_environ(node: ast.AST, facts: ModuleFacts) -> bool:
    return facts.qualified_name(node) == "os.environ"


def _selection_key(node: Optional[ast.AST]) -> bool:
    return isinstance(node, ast.Constant) and node.value in DEVICE_SELECTION


def _header_span(stmt: ast.stmt) -> Span:
    """The lines of what the statement evaluates itself: a compound statement's
    header (decorators included), up to the line before its first block."""
    first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
    blocks = [getattr(stmt, "body", None), getattr(stmt, "handlers", None)]
    starts = [b[0].lineno for b in blocks if isinstance(b, list) and b]
    if not starts:
        return first, stmt.end_lineno or stmt.lineno
    return first, max(first, min(starts) - 1)
