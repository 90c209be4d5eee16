"""TP3xx: the ``torch.cuda`` runtime API (devices, streams, events, memory, RNG).

The catalogue's rows of this pass (``codemod.catalog.RUNTIME``, read here as
``API``) map each ``torch.cuda`` name to its portable form: the rule it belongs to
(the rule carries the fix kind and the torch release the fix needs), the replacement
callee, and, where the portable call raises on a machine without an accelerator while
the CUDA call did not (or where the CUDA call crashed there too), the value the call
takes on the CPU. Such calls are emitted behind
``DEVICE.type != "cpu"``: inline as a conditional expression, or as a one-line ``if``
when the call is a statement of its own. Names with no portable equivalent are
reported with advice.

Every choice below was checked on CPU PyTorch 2.13:
- ``torch.get_device_module(DEVICE)`` is ``torch.cpu`` there, which has
  ``synchronize``, ``Stream``, ``current_stream`` and ``stream`` (no-ops), but no
  ``manual_seed*``, rng state or ``Event(enable_timing=...)``;
- ``torch.accelerator.*`` (device index, memory, streams) raises there;
- ``torch.Event(DEVICE).record()`` and ``torch.Stream(DEVICE).wait_stream`` raise
  there, so streams and events use the device module (``torch.cpu.Event()`` for the
  CPU: recording and waiting are no-ops; it cannot time, see TP307).
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Set, Union

import libcst as cst

from codemod import catalog
from codemod.catalog import Param, Row, under
from codemod.passes._helpers import AVAILABILITY, guards_cuda_only_code, is_guard
from codemod.passes.base import ACCELERATOR_TORCH, Pass, attribute_name, walk
from codemod.rules import EXAMPLE_BINDING, Fix, Rule, register

OOM_ERROR_TORCH = (2, 5)  # torch.OutOfMemoryError
MEMORY_TORCH = (2, 9)  # torch.accelerator memory statistics
MEMORY_INFO_TORCH = (2, 10)  # torch.accelerator.get_memory_info
DEVICE_INDEX_TORCH = (2, 8)  # torch.accelerator.device_index

RULES = (
    Rule(
        "TP301",
        "cuda-availability",
        "`torch.cuda.is_available()` / `device_count()` only know CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="Rewrites `torch.cuda.is_available()` and `torch.cuda.device_count()` to "
        "their `torch.accelerator` equivalents.",
        why="They then count TPU, Trainium, MPS, XPU or NPU devices too.",
        before=(
            "import torch\n"
            "\n"
            "if torch.cuda.device_count() > 1:\n"
            '    print("several devices")'
        ),
        after=(
            "import torch\n"
            "\n"
            "if torch.accelerator.device_count() > 1:\n"
            '    print("several devices")'
        ),
        safety="Safe: the same answers on CUDA and on CPU-only machines. An "
        "`is_available()` that guards code that stays CUDA-only (nvtx, CUDA graphs, "
        'other `torch.cuda` calls without a portable form, "cuda" strings left in '
        "place, apex, pynvml, ...) is left as it is.",
    ),
    Rule(
        "TP302",
        "cuda-current-device",
        "`torch.cuda.current_device()` / `set_device()` only know CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="`current_device()` becomes `torch.accelerator.current_device_index()` and "
        "`set_device(i)` becomes `torch.accelerator.set_device_index(i)`, both behind "
        '`DEVICE.type != "cpu"` (index 0 and a no-op on the CPU). Where the index is '
        "passed as a device (`device=`, `.to(...)`, `torch.device(...)`), "
        "`current_device()` becomes `torch.device(DEVICE.type, "
        "torch.accelerator.current_device_index())` (`DEVICE` on the CPU) and "
        "`x.get_device()` becomes `x.device`.",
        why="The torch.accelerator calls raise without an accelerator.",
        before=("import torch\n" "\n" "torch.cuda.set_device(local_rank)"),
        after=EXAMPLE_BINDING
        + (
            'if DEVICE.type != "cpu":\n'
            "    torch.accelerator.set_device_index(local_rank)"
        ),
        safety="Safe: unchanged on CUDA; on the CPU the index is 0.",
    ),
    Rule(
        "TP303",
        "cuda-device-context",
        "`torch.cuda.device(i)` only knows CUDA",
        Fix.SAFE,
        DEVICE_INDEX_TORCH,
        what="`with torch.cuda.device(i):` becomes `with torch.accelerator.device_index("
        'i if DEVICE.type != "cpu" else None):`.',
        why="`device_index(i)` raises without an accelerator; `device_index(None)` is a "
        "no-op.",
        before=(
            "import torch\n" "\n" "with torch.cuda.device(1):\n" "    x = torch.ones(2)"
        ),
        after=EXAMPLE_BINDING
        + (
            'with torch.accelerator.device_index(1 if DEVICE.type != "cpu" else None):\n'
            "    x = torch.ones(2)"
        ),
        safety="Safe for integer literals; an index held in a variable is assumed to "
        "be an int, not a torch.device (unsafe).",
    ),
    Rule(
        "TP304",
        "cuda-synchronize",
        "`torch.cuda.synchronize()` only knows CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="Rewrites `torch.cuda.synchronize()` to "
        "`torch.get_device_module(DEVICE).synchronize()`.",
        why="`torch.accelerator.synchronize()` raises without an accelerator; "
        "`torch.cpu.synchronize()` is a no-op.",
        before=("import torch\n" "\n" "torch.cuda.synchronize()"),
        after=EXAMPLE_BINDING + "torch.get_device_module(DEVICE).synchronize()",
        safety="Safe: on CUDA the device module is torch.cuda.",
    ),
    Rule(
        "TP305",
        "cuda-stream",
        "`torch.cuda` streams only know CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="`torch.cuda.Stream()`, `current_stream()` and `stream(s)` go through "
        "`torch.get_device_module(DEVICE)`; `set_stream(s)` becomes "
        '`torch.accelerator.set_stream(s)` behind `DEVICE.type != "cpu"`.',
        why="torch.cpu has no-op streams, so side-stream code still runs on the CPU "
        "(`torch.Stream(DEVICE).wait_stream` raises there).",
        before=(
            "import torch\n"
            "\n"
            "s = torch.cuda.Stream()\n"
            "with torch.cuda.stream(s):\n"
            "    x = torch.ones(2)"
        ),
        after=EXAMPLE_BINDING
        + (
            "s = torch.get_device_module(DEVICE).Stream()\n"
            "with torch.get_device_module(DEVICE).stream(s):\n"
            "    x = torch.ones(2)"
        ),
        safety="Safe: on CUDA the device module is torch.cuda. MPS has no stream API "
        "in its device module.",
    ),
    Rule(
        "TP306",
        "cuda-event",
        "`torch.cuda.Event` only knows CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="`torch.cuda.Event(...)` becomes `torch.get_device_module(DEVICE).Event(...)`"
        " on an accelerator and `torch.cpu.Event()` on the CPU.",
        why="`torch.Event(DEVICE).record()` raises on the CPU; torch.cpu events record "
        "and wait as no-ops.",
        before=("import torch\n" "\n" "start = torch.cuda.Event(enable_timing=True)"),
        after=EXAMPLE_BINDING
        + (
            "start = (\n"
            "    torch.get_device_module(DEVICE).Event(enable_timing=True)\n"
            '    if DEVICE.type != "cpu"\n'
            "    else torch.cpu.Event()\n"
            ")"
        ),
        safety="Safe: on CUDA the event is a torch.cuda.Event, as before.",
    ),
    Rule(
        "TP307",
        "event-elapsed-time",
        "`Event.elapsed_time()` cannot time on the CPU",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="In a module that uses `torch.cuda.Event`, `start.elapsed_time(end)` "
        'becomes `(start.elapsed_time(end) if DEVICE.type != "cpu" else float("nan"))`.',
        why="CPU events have no timer. NaN says 'not measured' without crashing the "
        "benchmark; use `time.perf_counter()` for CPU timings.",
        before=(
            "import torch\n"
            "\n"
            "start = torch.cuda.Event(enable_timing=True)\n"
            "end = torch.cuda.Event(enable_timing=True)\n"
            "ms = start.elapsed_time(end)"
        ),
        after=EXAMPLE_BINDING
        + (
            "start = (\n"
            "    torch.get_device_module(DEVICE).Event(enable_timing=True)\n"
            '    if DEVICE.type != "cpu"\n'
            "    else torch.cpu.Event()\n"
            ")\n"
            "end = (\n"
            "    torch.get_device_module(DEVICE).Event(enable_timing=True)\n"
            '    if DEVICE.type != "cpu"\n'
            "    else torch.cpu.Event()\n"
            ")\n"
            'ms = start.elapsed_time(end) if DEVICE.type != "cpu" else float("nan")'
        ),
        safety="Safe: unchanged on an accelerator; on the CPU the time is NaN (the "
        "original could not run there at all).",
    ),
    Rule(
        "TP308",
        "cuda-memory-stats",
        "`torch.cuda` memory statistics only know CUDA",
        Fix.SAFE,
        MEMORY_TORCH,
        what="`empty_cache`, `memory_allocated`, `max_memory_allocated`, "
        "`memory_reserved`, `max_memory_reserved`, `memory_stats`, "
        "`reset_peak_memory_stats`, `reset_accumulated_memory_stats` (and the old "
        "`*_cached` names) become the `torch.accelerator` functions, behind "
        '`DEVICE.type != "cpu"`: 0, `{}` or a no-op on the CPU, as torch.cuda was.',
        why="The torch.accelerator memory functions raise without an accelerator.",
        before=(
            "import torch\n"
            "\n"
            "print(torch.cuda.max_memory_allocated())\n"
            "torch.cuda.empty_cache()"
        ),
        after=EXAMPLE_BINDING
        + (
            'print(torch.accelerator.max_memory_allocated() if DEVICE.type != "cpu" else 0)\n'
            'if DEVICE.type != "cpu":\n'
            "    torch.accelerator.empty_cache()"
        ),
        safety="Safe: the values torch.cuda gave on a machine without a GPU.",
    ),
    Rule(
        "TP309",
        "cuda-mem-get-info",
        "`torch.cuda.mem_get_info()` only knows CUDA",
        Fix.UNSAFE,
        MEMORY_INFO_TORCH,
        what="`torch.cuda.mem_get_info()` becomes `torch.accelerator.get_memory_info()`, "
        "and `(0, 0)` on the CPU.",
        why="Both raise without an accelerator.",
        before=("import torch\n" "\n" "free, total = torch.cuda.mem_get_info()"),
        after=EXAMPLE_BINDING
        + 'free, total = torch.accelerator.get_memory_info() if DEVICE.type != "cpu" else (0, 0)',
        safety="Unsafe: on the CPU the answer is (0, 0); code dividing by the total "
        "needs a look.",
    ),
    Rule(
        "TP310",
        "cuda-manual-seed",
        "`torch.cuda.manual_seed*()` only seeds CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="`manual_seed`, `manual_seed_all`, `seed` and `seed_all` go through "
        '`torch.get_device_module(DEVICE)`, behind `DEVICE.type != "cpu"`.',
        why="torch.cpu has no seeding functions, and `torch.manual_seed` would also "
        "reseed the CPU generator, changing shuffling and dropout.",
        before=("import torch\n" "\n" "torch.cuda.manual_seed_all(seed)"),
        after=EXAMPLE_BINDING
        + (
            'if DEVICE.type != "cpu":\n'
            "    torch.get_device_module(DEVICE).manual_seed_all(seed)"
        ),
        safety="Safe: the same CUDA streams; a no-op on the CPU, as before.",
    ),
    Rule(
        "TP311",
        "cuda-rng-state",
        "`torch.cuda` RNG state only knows CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="`get_rng_state`, `set_rng_state`, `get_rng_state_all` and "
        "`set_rng_state_all` go through `torch.get_device_module(DEVICE)`, behind "
        '`DEVICE.type != "cpu"` (`None`, `[]` or a no-op on the CPU).',
        why="A machine without an accelerator has no accelerator generator to save.",
        before=(
            "import torch\n" "\n" 'state = {"cuda_rng": torch.cuda.get_rng_state()}'
        ),
        after=EXAMPLE_BINDING
        + (
            "state = {\n"
            '    "cuda_rng": (\n'
            "        torch.get_device_module(DEVICE).get_rng_state()\n"
            '        if DEVICE.type != "cpu"\n'
            "        else None\n"
            "    )\n"
            "}"
        ),
        safety="Safe: unchanged on CUDA; on the CPU `get_rng_state()` gives None and "
        "`set_rng_state` ignores its argument.",
    ),
    Rule(
        "TP312",
        "fork-rng-devices",
        "`torch.random.fork_rng(devices=...)` forks CUDA generators only",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="Adds `device_type=DEVICE.type` and makes `devices` empty on the CPU.",
        why="Without `device_type`, fork_rng forks CUDA only; with "
        '`device_type="cpu"` and any device it raises.',
        before=(
            "import torch\n"
            "\n"
            "with torch.random.fork_rng(devices=[0]):\n"
            "    noise = torch.randn(2)"
        ),
        after=EXAMPLE_BINDING
        + (
            "with torch.random.fork_rng(\n"
            '    devices=[0] if DEVICE.type != "cpu" else [], device_type=DEVICE.type\n'
            "):\n"
            "    noise = torch.randn(2)"
        ),
        safety="Safe: on CUDA the same generators are forked.",
    ),
    Rule(
        "TP314",
        "cuda-device-name",
        "`torch.cuda.get_device_name()` only knows CUDA",
        Fix.UNSAFE,
        ACCELERATOR_TORCH,
        what="Becomes `torch.get_device_module(DEVICE).get_device_name(...)`, and "
        '`"cpu"` on the CPU.',
        why="torch.accelerator has no get_device_name.",
        before=("import torch\n" "\n" "print(torch.cuda.get_device_name(0))"),
        after=EXAMPLE_BINDING
        + (
            "print(\n"
            "    torch.get_device_module(DEVICE).get_device_name(0)\n"
            '    if DEVICE.type != "cpu"\n'
            '    else "cpu"\n'
            ")"
        ),
        safety="Unsafe: not every device module has get_device_name (MPS has none).",
    ),
    Rule(
        "TP318",
        "cuda-out-of-memory-error",
        "`torch.cuda.OutOfMemoryError` names CUDA",
        Fix.SAFE,
        OOM_ERROR_TORCH,
        what="`torch.cuda.OutOfMemoryError` becomes `torch.OutOfMemoryError`.",
        why="It is the same class (torch >= 2.5), under a name that does not suggest "
        "CUDA; the fix is left out for older targets, which lack `torch.OutOfMemoryError`.",
        before=(
            "import torch\n"
            "\n"
            "try:\n"
            "    x = torch.ones(2)\n"
            "except torch.cuda.OutOfMemoryError:\n"
            "    x = None"
        ),
        after=(
            "import torch\n"
            "\n"
            "try:\n"
            "    x = torch.ones(2)\n"
            "except torch.OutOfMemoryError:\n"
            "    x = None"
        ),
        safety="Safe: `torch.cuda.OutOfMemoryError is torch.OutOfMemoryError`.",
    ),
    Rule(
        "TP390",
        "cuda-api-without-portable-form",
        "this `torch.cuda` API has no portable equivalent",
        Fix.NONE,
        None,
        what="Reports `torch.cuda` names torchport has no portable form for "
        "(`default_stream`, `ipc_collect`, `set_per_process_memory_fraction`, "
        "`memory_summary`, `get_device_properties`, ...), with advice.",
        why="They raise or mean nothing on other devices.",
        before=(
            "import torch\n" "\n" "torch.cuda.set_per_process_memory_fraction(0.5)"
        ),
        after='if DEVICE.type == "cuda":  # by hand\n'
        "    torch.cuda.set_per_process_memory_fraction(0.5)",
        safety="No automatic fix.",
    ),
)
register(*RULES)

CPU = '{device}.type != "cpu"'  # the guard; its quotes are adapted inside f-strings

# The table: qualified name (after ALIASES) -> its catalogue row (portable form,
# value on the CPU, shape of the rewrite, advice when reported).
API: Dict[str, Row] = catalog.names_of("cuda_runtime")
UNKNOWN = Row(
    ("torch.cuda.*",),
    "TP390",
    "cuda_runtime",
    shape="report",
    advice=catalog.UNKNOWN_ADVICE,
)
# Submodules whose functions torch.cuda re-exports.
ALIASES = re.compile(r"^torch\.cuda\.(?:memory|random|streams)\.")
# Reported by other passes (AMP, distributed, backend flags, report-only ones).
ELSEWHERE = catalog.torch_cuda_elsewhere()
# Names that keep guarded code CUDA-only (so its `is_available()` guard stays).
CUDA_ONLY_MODULES = catalog.CUDA_ONLY_LIBRARIES + ("torch.utils.cpp_extension",)
_CUDA_LITERAL = re.compile(r"cuda(?::\d+)?")
_CPU_LITERAL = re.compile("cpu")


KEPT_GUARD = (
    "`torch.cuda.is_available()` kept: the code it guards still needs CUDA once "
    "rewritten; port that code, then widen the guard"
)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _is_name(node: cst.CSTNode, value: str) -> bool:
    return isinstance(node, cst.Name) and node.value == value


def _device_index_arg(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The one argument of ``torch.cuda.device(...)``, if it has the usual form."""
    args = call.args
    if len(args) != 1 or args[0].star:
        return None
    if args[0].keyword is not None and args[0].keyword.value != "device":
        return None
    return args[0].value


def _mapped_arguments(
    args: Sequence[cst.Arg], params: Optional[Sequence[Param]]
) -> Union[Sequence[cst.Arg], str]:
    """The call's arguments as the portable form takes them (``params``: the CUDA
    function's parameters, see ``catalog.Param``), or why that is not exact."""
    if params is None:
        return args
    if any(a.star for a in args):
        return "arguments passed with * or ** cannot be checked against the target"
    values: List[Optional[cst.Arg]] = [None] * len(params)
    names = [p.name for p in params]
    for position, arg in enumerate(args):
        if arg.keyword is None:
            if position >= len(params):
                return "more arguments than the target takes"
            values[position] = arg
        elif (
            arg.keyword.value in names
            and values[names.index(arg.keyword.value)] is None
        ):
            values[names.index(arg.keyword.value)] = arg
        else:
            return f"`{arg.keyword.value}=` is not an argument the target takes"
    out: List[cst.Arg] = []
    keywords: List[cst.Arg] = []
    for index, (param, arg) in enumerate(zip(params, values)):
        if arg is None:
            continue
        if param.index_only and not (
            isinstance(arg.value, cst.Integer) or _is_name(arg.value, "None")
        ):
            return (
                f"`{param.name}` must be an int index there, not a device or a string"
            )
        if param.positional_only:
            if any(v is None for v in values[:index]):
                return (
                    f"`{param.name}` is positional there and an earlier one is missing"
                )
            out.append(arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT))
        else:
            keywords.append(arg)
    out += keywords
    last = len(out) - 1
    return [
        a.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == last else a
        for i, a in enumerate(out)
    ]


def canonical(name: str) -> str:
    return ALIASES.sub("torch.cuda.", name)


def _guard(quote: str = '"') -> str:
    return CPU.replace('"', quote)


class CudaRuntime(Pass):
    RULES = RULES
    # elapsed_time: timing lines rarely say "cuda" themselves.
    TRIGGER = catalog.trigger_of("cuda_runtime")

    def __init__(self, context) -> None:
        super().__init__(context)
        self.skip: Set[cst.CSTNode] = set()  # not references: handled or not names
        self.bare: Set[cst.CSTNode] = set()  # positions where no parentheses are needed
        self.guarded: Set[cst.CSTNode] = set()  # elapsed_time() already guarded
        self.statements: Dict[int, cst.BaseExpression] = {}  # guard IfExp -> call
        self.made: Set[int] = set()  # ids of the `if` statements emitted for guards
        # Enclosing branches that run only where there is an accelerator (no guard
        # needed inside), and the flags that select "cuda" (`"cuda" if use_cuda ...`).
        self.accelerated: List[bool] = []
        self.flags: Set[str] = set()
        self.quotes: List[str] = []  # enclosing f-string quotes
        # is_available() calls in an if-test, decided when the whole `if` is known.
        self.tests: Dict[cst.CSTNode, List[cst.Call]] = {}
        self.pending: Dict[cst.Call, cst.Call] = {}  # original -> updated
        self.renamed: Dict[cst.CSTNode, Row] = {}  # names replaced by another name
        # Calls whose int result is passed as a device: `current_device()`,
        # `x.get_device()` (-1 for a CPU tensor).
        self.as_device: Set[cst.Call] = set()
        words = context.facts.identifiers
        self.uses_events = "Event" in words and "cuda" in words

    def _row(self, name: str) -> Optional[Row]:
        """The table's row for a torch.cuda name; None when another pass owns it."""
        name = canonical(name)
        if under(name, ELSEWHERE) or name == "torch.cuda":
            return None
        return API.get(name, UNKNOWN)

    # -- classification, top-down ---------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        self.skip.update(walk(node))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.skip.update(walk(node))

    def visit_If(self, node: cst.If) -> None:
        self._note_test(node, node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._note_test(node, node.test)
        if self._device_literal(node.body, _CUDA_LITERAL) and self._device_literal(
            node.orelse, _CPU_LITERAL
        ):
            self.flags.add(_code(node.test))
        body = node.body
        if isinstance(body, cst.Call) and attribute_name(body) == "elapsed_time":
            self.guarded.add(body)

    # A branch taken only with an accelerator: `if torch.cuda.is_available():`, our
    # own guard, or a flag that selects the "cuda" device (where it is set, the
    # program runs on the accelerator; on CUDA the guard is true anyway).
    def visit_If_body(self, node: cst.If) -> None:
        self.accelerated.append(self._needs_accelerator(node.test))

    def leave_If_body(self, node: cst.If) -> None:
        self.accelerated.pop()

    def visit_IfExp_body(self, node: cst.IfExp) -> None:
        self.accelerated.append(self._needs_accelerator(node.test))

    def leave_IfExp_body(self, node: cst.IfExp) -> None:
        self.accelerated.pop()

    def _device_literal(self, node: cst.BaseExpression, pattern) -> bool:
        """``"cuda"`` or ``torch.device("cuda")`` (for ``pattern``)."""
        if (
            isinstance(node, cst.Call)
            and self.callee(node) == "torch.device"
            and len(node.args) == 1
        ):
            node = node.args[0].value
        return isinstance(node, cst.SimpleString) and bool(
            pattern.fullmatch(str(node.evaluated_value))
        )

    def _needs_accelerator(self, test: cst.BaseExpression) -> bool:
        if isinstance(test, cst.BooleanOperation) and isinstance(
            test.operator, cst.And
        ):
            return self._needs_accelerator(test.left) or self._needs_accelerator(
                test.right
            )
        if isinstance(test, cst.Call):
            return self.callee(test) in AVAILABILITY and not test.args
        return _code(test) in self.flags or is_guard(test, self.context.device_name)

    def _note_test(self, node: cst.CSTNode, test: cst.CSTNode) -> None:
        checks = [
            n
            for n in walk(test)
            if isinstance(n, cst.Call) and self.callee(n) == "torch.cuda.is_available"
        ]
        if checks:
            self.tests[node] = checks

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self.quotes.append(node.quote)

    def leave_FormattedString(self, original_node, updated_node):
        self.quotes.pop()
        return updated_node

    def visit_FormattedStringExpression(self, node) -> None:
        self.bare.add(node.expression)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.skip.add(node.keyword)
            if node.keyword.value == "device":
                self._note_device(node.value)
        if not node.star:
            self.bare.add(node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        self.bare.add(node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self.bare.add(node.value)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self.bare.add(node.value)

    def visit_Expr(self, node: cst.Expr) -> None:
        self.bare.add(node.value)

    def visit_Element(self, node: cst.Element) -> None:
        self.bare.add(node.value)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        self.bare.add(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        name = self.callee(node)
        if name and name.startswith("torch.cuda."):
            self.skip.update(walk(node.func))  # the call is the site
        first = node.args[0] if node.args else None
        if first is not None and first.keyword is None and not first.star:
            if name == "torch.device" and len(node.args) == 1:
                self._note_device(first.value)
            elif name is None and attribute_name(node) == "to":
                self._note_device(first.value)

    def _note_device(self, value: cst.BaseExpression) -> None:
        """An int index passed where a device is meant (a `device=` argument, the
        device of `.to(...)` or of `torch.device(...)`)."""
        if not isinstance(value, cst.Call) or value.args:
            return
        own = "get_device" in self.context.facts.functions  # a method of the user's
        if self.callee(value) == "torch.cuda.current_device" or (
            attribute_name(value) == "get_device" and not self.callee(value) and not own
        ):
            self.as_device.add(value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.skip.add(node.attr)
        self._reference(node)

    def visit_Name(self, node: cst.Name) -> None:
        self._reference(node)

    def _reference(self, node: cst.CSTNode) -> None:
        """A torch.cuda name used other than by calling it: reported."""
        if node in self.skip:
            return
        name = self.qualified_name(node)
        if not name or not name.startswith("torch.cuda."):
            return
        self.skip.update(walk(node))
        row = self._row(name)
        if row is None:
            return
        short = canonical(name)[len("torch.") :]
        if row.shape == "report":
            self.report(node, row.code, f"`torch.{short}`: {row.advice}")
        elif row.shape == "name":
            if self._applied(node, row.code):
                self.renamed[node] = row
        else:
            self.report(
                node,
                row.code,
                f"`torch.{short}` used as a value: only calls are rewritten",
            )

    # -- rewriting, bottom-up -------------------------------------------------
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        if original_node in self.as_device:
            return self._index_as_device(original_node, updated_node)
        name = self.callee(original_node)
        if (
            name == "torch.device"
            and len(original_node.args) == 1
            and original_node.args[0].value in self.as_device
            and updated_node.args[0].value is not original_node.args[0].value
        ):
            device = updated_node.args[0].value  # already a device
            if isinstance(device, cst.IfExp) and original_node not in self.bare:
                device = device.with_changes(
                    lpar=[cst.LeftParen()], rpar=[cst.RightParen()]
                )
            return device
        if name and name.startswith("torch.cuda."):
            if any(original_node in calls for calls in self.tests.values()):
                self.pending[original_node] = updated_node  # decided with its `if`
                return updated_node
            return self._cuda_call(original_node, updated_node, name)
        if name == "torch.random.fork_rng":
            return self._fork_rng(original_node, updated_node)
        if (
            self.uses_events
            and attribute_name(updated_node) == "elapsed_time"
            and len(updated_node.args) == 1
            and original_node not in self.guarded
            and self.record_and_decide(original_node, "TP307")
        ):
            return self._guarded(original_node, updated_node, 'float("nan")')
        return updated_node

    def leave_If(self, original_node: cst.If, updated_node: cst.If):
        return self._decide_test(original_node, updated_node)

    def leave_IfExp(self, original_node: cst.IfExp, updated_node: cst.IfExp):
        return self._decide_test(original_node, updated_node)

    def _decide_test(self, original, updated):
        """``torch.cuda.is_available()`` in a test becomes portable only when what it
        guards no longer needs CUDA once every pass has rewritten it."""
        checks = self.tests.pop(original, ())
        if not checks:
            return updated
        recognized = guards_cuda_only_code(original, self.qualified_name)
        if recognized or self._cuda_only(updated.body, updated.orelse):
            # A CUDA-only guard stays. The report-only pass reports the guards it
            # recognizes (TP910); the others are reported here, never left silent.
            if not recognized:
                for check in checks:
                    self.report(check, "TP301", KEPT_GUARD)
            return updated
        test = updated.test
        for check in checks:
            old = self.pending.pop(check, None)
            if old is None:
                continue
            new = self._cuda_call(check, old, "torch.cuda.is_available")
            if new is not old:
                test = test.deep_replace(old, new)
        return updated.with_changes(test=test)

    def _cuda_only(self, *parts: Optional[cst.CSTNode]) -> bool:
        """Whether rewritten code still needs CUDA: a torch.cuda name (other than
        AMP, which has a portable form), a `.cuda()`, a "cuda" string, or a
        CUDA-only library."""
        for part in parts:
            if part is None:
                continue
            for node in walk(part):
                if isinstance(node, cst.SimpleString):
                    value = node.evaluated_value
                    if isinstance(value, str) and _CUDA_LITERAL.fullmatch(value):
                        return True
                elif isinstance(node, cst.Call) and attribute_name(node) == "cuda":
                    if not self.qualified_name(node.func):
                        return True
                elif isinstance(node, (cst.Name, cst.Attribute)):
                    name = self.qualified_name(node) or ""
                    if under(name, CUDA_ONLY_MODULES):
                        return True
                    if name.startswith("torch.cuda.") and not name.startswith(
                        ("torch.cuda.amp.", "torch.cuda.is_available")
                    ):
                        return True
        return False

    def _cuda_call(self, original: cst.Call, updated: cst.Call, name: str):
        row = self._row(name)
        if row is None:
            return updated
        short = canonical(name)[len("torch.") :]
        if row.shape == "report":
            self.report(original, row.code, f"`torch.{short}`: {row.advice}")
            return updated
        return getattr(self, f"_shape_{row.shape}")(original, updated, row, short)

    def leave_Name(self, original_node, updated_node):
        return self._rename(original_node, updated_node)

    def leave_Attribute(self, original_node, updated_node):
        return self._rename(original_node, updated_node)

    def _rename(self, original, updated):
        row = self.renamed.get(original)
        if row is None:
            return updated
        return self.expr(row.portable).with_changes(
            lpar=updated.lpar, rpar=updated.rpar
        )

    def _applied(self, original, code: str, message="", fix=None) -> bool:
        """Record a site (a call, or a name); when it is fixed, schedule the removal
        of the import it came through if nothing else uses that import."""
        if not self.record_and_decide(original, code, message, fix):
            return False
        root = original.func if isinstance(original, cst.Call) else original
        while isinstance(root, cst.Attribute):
            root = root.value
        target = self.context.facts.imports.get(getattr(root, "value", ""), "")
        if "." in target:  # `from torch.cuda import x`, `from torch import cuda`
            module, imported = target.rsplit(".", 1)
            alias = root.value if root.value != imported else None  # type: ignore
            self.drop_import_if_unused(module, imported, alias)
        return True

    def _shape_call(self, original, updated, row: Row, short: str):
        args = _mapped_arguments(updated.args, row.params)
        if isinstance(args, str):  # not exact: said why
            target = row.portable.format(torch="torch", device="DEVICE")  # type: ignore
            self.report(original, row.code, f"`torch.{short}(...)`: {args} ({target})")
            return updated
        if not self._applied(original, row.code):
            return updated
        call = updated.with_changes(func=self.expr(row.portable), args=args)
        if row.cpu is None:
            return call
        return self._guarded(original, call, row.cpu)

    def _index_as_device(self, original: cst.Call, updated: cst.Call):
        """A device index used as a device means that device: on CUDA
        ``torch.device("cuda", i)``, exactly what the int selects."""
        if attribute_name(original) == "get_device":
            message = (
                "`x.get_device()` is -1 for a tensor on the CPU, which no device "
                "argument takes: `x.device` is the same device everywhere"
            )
            if not self.record_and_decide(original, "TP302", message):
                return updated
            return cst.Attribute(updated.func.value, cst.Name("device"))  # type: ignore
        message = (
            "`torch.cuda.current_device()` used as a device becomes the current "
            "accelerator device (the device binding on the CPU)"
        )
        if not self._applied(original, "TP302", message):
            return updated
        device = self.expr(
            "{torch}.device({device}.type, {torch}.accelerator.current_device_index())"
        )
        return self._guarded(original, device, self.context.device_name)

    def _shape_name(self, original, updated, row: Row, short: str):
        """A class with another name (raised or caught): only the name changes."""
        if not self._applied(original, row.code):
            return updated
        return updated.with_changes(func=self.expr(row.portable))

    def _guarded(self, original, call, cpu: str) -> cst.BaseExpression:
        """``(call if DEVICE.type != "cpu" else cpu)``, parenthesized only if needed;
        the call alone inside a branch that runs only with an accelerator."""
        if any(self.accelerated):
            return call
        quote = "'" if self.quotes and '"' in self.quotes[-1] else '"'
        node = self.expr(
            "({call} if " + _guard(quote) + " else " + cpu + ")", call=call
        )
        if original in self.bare:
            node = node.with_changes(lpar=[], rpar=[])
        self.statements[id(node)] = call  # its value is unused if it is a statement
        return node

    def _shape_device_index(self, original, updated, row: Row, short: str):
        value = _device_index_arg(original)
        if value is None:
            self.report(original, row.code)
            return updated
        literal = isinstance(value, cst.Integer) or _is_name(value, "None")
        message = "" if literal else "the device is assumed to be an int index"
        if not self._applied(
            original, row.code, message, None if literal else Fix.UNSAFE
        ):
            return updated
        index = _device_index_arg(updated)
        if not _is_name(index, "None"):  # type: ignore[arg-type]
            index = self.expr("{index} if " + _guard() + " else None", index=index)
        return self.expr(row.portable + "({index})", index=index)

    def _fork_rng(self, original: cst.Call, updated: cst.Call):
        args = list(updated.args)
        keyword = {a.keyword.value: i for i, a in enumerate(args) if a.keyword}
        positional = [i for i, a in enumerate(args) if a.keyword is None]
        if any(a.star for a in args) or len(positional) > 1:
            return updated
        devices = keyword.get("devices", positional[0] if positional else None)
        device_type = keyword.get("device_type")
        ours = device_type is not None and self._is_device_type(args[device_type].value)
        if (device_type is not None and not ours) or (devices is None and not ours):
            return updated  # a plain fork_rng(), or a device type of the user's
        if devices is not None and isinstance(args[devices].value, cst.IfExp):
            return updated  # already guarded
        if not self.record_and_decide(original, "TP312"):
            return updated
        value = args[devices].value if devices is not None else cst.Name("None")
        guarded = self.expr("{value} if " + _guard() + " else []", value=value)
        if devices is not None:
            args[devices] = args[devices].with_changes(value=guarded)
        else:
            args.insert(0, cst.Arg(guarded, keyword=cst.Name("devices")))
        if device_type is None:
            args.append(cst.Arg(self.device_type(), keyword=cst.Name("device_type")))
        no_space = cst.SimpleWhitespace("")
        equal = cst.AssignEqual(whitespace_before=no_space, whitespace_after=no_space)
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        args = [
            a.with_changes(
                comma=comma if i < len(args) - 1 else cst.MaybeSentinel.DEFAULT,
                equal=equal if a.keyword else a.equal,
            )
            for i, a in enumerate(args)
        ]
        return updated.with_changes(args=args)

    def _is_device_type(self, node: cst.CSTNode) -> bool:
        """``DEVICE.type``, as the device-string rules write it."""
        return (
            isinstance(node, cst.Attribute)
            and _is_name(node.value, self.context.device_name)
            and node.attr.value == "type"
        )

    # -- guarded statements ----------------------------------------------------
    def _guarded_statement(self, statement: cst.BaseSmallStatement):
        """The call of ``call if DEVICE.type != "cpu" else ...`` as a statement."""
        if isinstance(statement, cst.Expr):
            return self.statements.get(id(statement.value))
        return None

    def _if(self, call: cst.BaseExpression, comment=None, **changes) -> cst.If:
        """``if DEVICE.type != "cpu":`` over ``call`` (and its line's comment)."""
        line = cst.SimpleStatementLine([cst.Expr(call)])
        if comment is not None:
            line = line.with_changes(trailing_whitespace=comment)
        node = cst.If(
            test=self.expr(_guard()), body=cst.IndentedBlock([line]), **changes
        )
        self.made.add(id(node))
        return node

    def _split(self, line: cst.SimpleStatementLine) -> List[cst.BaseStatement]:
        """A line with guarded calls: an ``if`` per guarded statement; a line holding
        several statements (``a; b``) becomes one line each."""
        statements = line.body
        if not any(self._guarded_statement(s) for s in statements):
            return [line]
        out: List[cst.BaseStatement] = []
        for i, statement in enumerate(statements):
            last = i == len(statements) - 1
            changes = {"leading_lines": line.leading_lines} if i == 0 else {}
            call = self._guarded_statement(statement)
            if call is not None:
                comment = line.trailing_whitespace if last else None
                out.append(self._if(call, comment, **changes))
            else:
                statement = statement.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
                out.append(
                    cst.SimpleStatementLine(
                        [statement],
                        trailing_whitespace=(
                            line.trailing_whitespace
                            if last
                            else cst.TrailingWhitespace()
                        ),
                        **changes,
                    )
                )
        return out

    def leave_SimpleStatementLine(self, original_node, updated_node):
        out = self._split(updated_node)
        if len(out) == 1:
            return out[0]
        return cst.FlattenSentinel(out)

    def leave_SimpleStatementSuite(self, original_node, updated_node):
        """``if x: call`` on one line: the guarded call gets a block of its own."""
        line = cst.SimpleStatementLine(body=updated_node.body)
        out = self._split(line)
        if out == [line]:
            return updated_node
        return cst.IndentedBlock(
            body=self._merged(out), header=updated_node.trailing_whitespace
        )

    def _merged(self, body: Sequence[cst.BaseStatement]) -> List[cst.BaseStatement]:
        """Consecutive guard ``if`` blocks emitted here share one block (exact: the
        guarded calls do not rebind the device)."""
        out: List[cst.BaseStatement] = []
        for statement in body:
            previous = out[-1] if out else None
            if (
                id(statement) in self.made
                and id(previous) in self.made
                and not statement.leading_lines  # type: ignore[union-attr]
                and isinstance(previous.body, cst.IndentedBlock)  # type: ignore
                and isinstance(statement.body, cst.IndentedBlock)  # type: ignore
            ):
                block = previous.body  # type: ignore[union-attr]
                merged = previous.with_changes(  # type: ignore[union-attr]
                    body=block.with_changes(
                        body=[*block.body, *statement.body.body]  # type: ignore
                    )
                )
                self.made.add(id(merged))
                out[-1] = merged
            else:
                out.append(statement)
        return out

    def leave_IndentedBlock(self, original_node, updated_node):
        if not any(id(s) in self.made for s in updated_node.body):
            return updated_node
        return updated_node.with_changes(body=self._merged(updated_node.body))

    def leave_Module(self, original_node, updated_node):
        if not any(id(s) in self.made for s in updated_node.body):
            return updated_node
        return updated_node.with_changes(body=self._merged(updated_node.body))
