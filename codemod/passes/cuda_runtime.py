"""TP3xx: the ``torch.cuda`` runtime API (devices, streams, events, memory, RNG).

The catalogue's rows of this pass (``codemod.catalog.runtime``, read here as
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

import ast
import operator
import re
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from codemod import catalog
from codemod.catalog import Param, Row, under
from codemod.passes.cuda_only_code import (
    calls_cuda_named,
    cuda_only_code,
    guards_cuda_only_code,
)
from codemod.passes.guards import (
    AcceleratedBranches,
    exit_guards,
    fallback_checks,
    is_cuda_test,
    is_guard,
)
from codemod.passes.base import ACCELERATOR_TORCH, Pass, attribute_name, walk
from codemod.rules import EXAMPLE_BINDING, register
from codemod.model.rule import Fix, Rule

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
        "place, apex, pynvml, ...) is left as it is, and so is an early exit "
        "(`if not torch.cuda.is_available(): return`, `assert "
        "torch.cuda.is_available()`) before such code in its block, and a check "
        'that takes the CPU when "cuda" was asked for and is missing (`if args.device '
        '== "cuda" and not torch.cuda.is_available():`, or plainly `if not '
        'torch.cuda.is_available(): args.device = "cpu"`). A call to a function of '
        "the program's own named for CUDA (`dtw_cuda(x)`) counts as CUDA-only code.",
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
        safety="Safe where the index is known to be an int: a literal, a call that "
        "gives one (`int(...)`, `len(...)`, `current_device()`, `device_count()`, "
        "`x.get_device()`), or a variable of the same function (or module) always "
        "bound so or by `for i in range(...)`. Any other index is assumed to be an "
        "int, not a torch.device or a string (unsafe).",
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
        what="`torch.cuda.Stream()`, `current_stream()`, `default_stream()` and "
        "`stream(s)` go through `torch.get_device_module(DEVICE)` (a `Stream(...)` "
        'given a device is made behind `DEVICE.type != "cpu"`, `torch.cpu.Stream()` '
        "on the CPU, whose stream takes no device); `set_stream(s)` "
        'becomes `torch.accelerator.set_stream(s)` behind `DEVICE.type != "cpu"`. '
        "On a stream known by its binding (made by one of these calls, in the same "
        "function, or an attribute always set so), `.synchronize()` and `.query()`, "
        "and `x.record_stream(stream)`, are kept for accelerators: a statement goes "
        'behind `if DEVICE.type != "cpu":`, `query()` is True on the CPU.',
        why="torch.cpu has no-op streams (`wait_stream`, `wait_event`, `with "
        "stream(s):` work), so side-stream code still runs on the CPU; they have no "
        "`synchronize` or `query`, CPU tensors have no `record_stream`, and "
        "`torch.Stream(DEVICE).wait_stream` raises there.",
        before=(
            "import torch\n"
            "\n"
            "s = torch.cuda.Stream()\n"
            "with torch.cuda.stream(s):\n"
            "    x = torch.ones(2)\n"
            "s.synchronize()"
        ),
        after=EXAMPLE_BINDING
        + (
            "s = torch.get_device_module(DEVICE).Stream()\n"
            "with torch.get_device_module(DEVICE).stream(s):\n"
            "    x = torch.ones(2)\n"
            'if DEVICE.type != "cpu":\n'
            "    s.synchronize()"
        ),
        safety="Safe: on CUDA the device module is torch.cuda and every call is "
        "unchanged. MPS has no stream API in its device module; XPU has no "
        "`default_stream`.",
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
        what="`start.elapsed_time(end)` on an event known by its binding (made by "
        "`torch.cuda.Event(...)` in the same function or module, an attribute always "
        "set so, or an element of a list of them) becomes "
        '`(start.elapsed_time(end) if DEVICE.type != "cpu" else float("nan"))`. '
        "Other receivers are left alone (a host timer of the program's own), and "
        "reported where the module makes CUDA events and defines no `elapsed_time`.",
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
        "(`memory_summary`, `get_device_properties`, `initial_seed`, ...), with "
        "advice. (CUDA-only calls made for their effect alone are TP911.)",
        why="They raise or mean nothing on other devices.",
        before=("import torch\n" "\n" "print(torch.cuda.memory_summary())"),
        after='if DEVICE.type == "cuda":  # by hand\n'
        "    print(torch.cuda.memory_summary())",
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
    rewrite="report",
    advice=catalog.UNKNOWN_ADVICE,
)
# Submodules whose functions torch.cuda re-exports.
ALIASES = re.compile(r"^torch\.cuda\.(?:memory|random|streams)\.")
# Reported by other passes (AMP, distributed, backend flags, report-only ones).
ELSEWHERE = catalog.torch_cuda_elsewhere()
# Names that keep guarded code CUDA-only (so its `is_available()` guard stays).
CUDA_ONLY_MODULES = catalog.CUDA_ONLY_LIBRARIES + ("torch.utils.cpp_extension",)
_CUDA_LITERAL = re.compile(r"cuda(?::\d+)?")


FALLBACK = (
    '`torch.cuda.is_available()` kept: with the "cuda" asked for, it takes the CPU '
    "fallback when CUDA is missing; widened, the fallback would no longer be taken "
    "(choose the device from `DEVICE` instead)"
)
KEPT_EXIT = (
    "`torch.cuda.is_available()` kept: this early exit guards the rest of its block, "
    "which is not in view here; widen it by hand once that code is portable"
)
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


# Operators after which a guard covers the whole figure (memory in MiB, say).
_SCALING = {cst.Divide: ast.Div, cst.FloorDivide: ast.FloorDiv}
_ARITHMETIC = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}


def _number(node: ast.AST) -> Union[int, float, None]:
    """The value of an arithmetic expression of number literals (``2**20``,
    ``1024 * 1024``, ``1e9``), or None."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _number(node.operand)
        return None if value is None else -value
    if not isinstance(node, ast.BinOp) or type(node.op) not in _ARITHMETIC:
        return None
    left, right = _number(node.left), _number(node.right)
    if left is None or right is None:
        return None
    if isinstance(node.op, ast.Pow) and not (abs(left) <= 2**16 and 0 <= right <= 64):
        return None  # keep the arithmetic small
    try:
        return _ARITHMETIC[type(node.op)](left, right)
    except (ArithmeticError, ValueError):
        return None


def _scaled_cpu_value(cpu: cst.BaseExpression, op, divisor) -> Optional[str]:
    """``cpu op divisor`` as a literal (``0 / 2**20`` is ``0.0``), when both are
    number literals; None otherwise."""
    try:
        expression = ast.parse(
            f"({_code(cpu)}) OP ({_code(divisor)})".replace(
                "OP", "/" if _SCALING[type(op)] is ast.Div else "//"
            ),
            mode="eval",
        )
    except SyntaxError:
        return None
    value = _number(expression.body)
    return None if value is None or value != value else repr(value)


class CudaRuntime(AcceleratedBranches, Pass):
    RULES = RULES
    # elapsed_time: timing lines rarely say "cuda" themselves.
    TRIGGER = catalog.trigger_of("cuda_runtime")
    # A method of an event or stream is decided by the object's binding: the pass
    # sees its whole top-level statement (a variable of a function, an attribute
    # set in __init__). `torch.cuda.synchronize()` needs no binding, nor a call's
    # result (`current_stream().synchronize()`, or the emitted
    # `get_device_module(DEVICE).synchronize()`: a second run must chunk as the first).
    CONTEXT = re.compile(
        r"elapsed_time|record_stream|(?<!cuda)(?<!\))\.(?:synchronize|query)\("
        r"|cuda\.device\("
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        self.skip: Set[cst.CSTNode] = set()  # not references: handled or not names
        self.guarded: Set[cst.CSTNode] = set()  # elapsed_time() already guarded
        self.statements: Dict[cst.CSTNode, cst.BaseExpression] = (
            {}
        )  # guard IfExp -> call
        self.made: Set[cst.CSTNode] = set()  # the `if` statements emitted for guards
        self.quotes: List[str] = []  # enclosing f-string quotes
        # CUDA events and streams known by their binding (see CudaObjects).
        self.objects = CudaObjects(self.qualified_name, context.facts.bound)
        # is_available() calls in an if-test, decided when the whole `if` is known.
        self.tests: Dict[cst.CSTNode, List[cst.Call]] = {}
        self.pending: Dict[cst.Call, cst.Call] = {}  # original -> updated
        self.renamed: Dict[cst.CSTNode, Row] = {}  # names replaced by another name
        # Calls whose int result is passed as a device: `current_device()`,
        # `x.get_device()` (-1 for a CPU tensor).
        self.as_device: Set[cst.Call] = set()
        # Early exits (`if not ...is_available(): return`, `assert ...`): decided
        # with the rest of their block, which is what they guard.
        self.early: Set[cst.CSTNode] = set()
        self.fallbacks: Set[cst.CSTNode] = set()  # tests that pick the CPU: kept
        words = context.facts.identifiers
        self.uses_events = "Event" in words and "cuda" in words

    def _row(self, name: str) -> Optional[Row]:
        """The table's row for a torch.cuda name; None when another pass owns it."""
        if under(name, ELSEWHERE):  # `torch.cuda.memory._record_memory_history`
            return None
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
        self._note_fallback(node)
        if is_guard(node.test, self.context.device_name):  # guarded by a first run
            self.guarded.update(
                n
                for n in walk(node.body)
                if isinstance(n, cst.Call) and attribute_name(n) in METHODS
            )

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._note_test(node, node.test)
        self._note_fallback(node)
        self.note_flag(node)
        if isinstance(node.body, cst.Call) and attribute_name(node.body) in METHODS:
            self.guarded.add(node.body)

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

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.skip.add(node.keyword)
            if node.keyword.value == "device":
                self._note_device(node.value)

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
        if row.rewrite == "report":
            self.report(node, row.code, f"`torch.{short}`: {row.advice}")
        elif row.rewrite == "name":
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
            if isinstance(device, cst.IfExp) and original_node not in self.context.bare:
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
        if attribute_name(original_node) in METHODS:
            return self._object_method(original_node, updated_node)
        return updated_node

    def leave_If(self, original_node: cst.If, updated_node: cst.If):
        return self._decide_test(original_node, updated_node)

    def leave_IfExp(self, original_node: cst.IfExp, updated_node: cst.IfExp):
        return self._decide_test(original_node, updated_node)

    def leave_BinaryOperation(self, original_node, updated_node):
        """``(call if guard else 0) / 2**20`` becomes ``call / 2**20 if guard else
        0.0``: the guard covers the whole figure, so black never wraps the division
        onto a line of its own. The CPU value is the one the division gave."""
        left = updated_node.left
        if left not in self.statements or type(updated_node.operator) not in _SCALING:
            return updated_node
        cpu = _scaled_cpu_value(left.orelse, updated_node.operator, updated_node.right)
        if cpu is None:
            return updated_node
        body = updated_node.with_changes(left=left.body, lpar=[], rpar=[])
        hoisted = left.with_changes(body=body, orelse=cst.parse_expression(cpu))
        if updated_node.lpar:
            hoisted = hoisted.with_changes(
                lpar=updated_node.lpar, rpar=updated_node.rpar
            )
        elif original_node in self.context.bare:
            hoisted = hoisted.with_changes(lpar=[], rpar=[])
        self.statements[hoisted] = self.statements[left]
        return hoisted

    def _note_fallback(self, node: Union[cst.If, cst.IfExp]) -> None:
        """Keep a fallback check as written: its "cuda" is what the user asked for
        (no other pass rewrites it), its availability check is CUDA's."""
        comparisons, checks = fallback_checks(node, self.qualified_name)
        for comparison in comparisons:
            self.context.claim(comparison)
        self.fallbacks.update(checks)
        if checks and node not in checks:  # the comparison has a line of its own
            self.report(node, "TP301", FALLBACK)

    def visit_Module(self, node: cst.Module) -> None:
        self._note_exits(node)
        self.objects.enter_chunk(node, top_level=self.context.col_offset == 0)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._note_exits(node)

    def _note_exits(self, block: Union[cst.Module, cst.IndentedBlock]) -> None:
        for _, guard in exit_guards(block.body, self.qualified_name):
            self.early.add(guard)

    def visit_Assert(self, node: cst.Assert) -> None:
        if node in self.early:
            self._note_test(node, node.test)

    def leave_Module(self, original_node, updated_node):
        return self._merge_made(self._decide_exits(original_node, updated_node))

    def leave_IndentedBlock(self, original_node, updated_node):
        return self._merge_made(self._decide_exits(original_node, updated_node))

    def _decide_exits(self, original, updated):
        """Decide each early exit of a block with the statements after it. A module
        here is a chunk of the file (codemod.rewrite.chunks): unless it ends its block (a
        chunk holding an early exit runs to the end of its block), later statements
        are not in view and its early exits are kept (and reported)."""
        body = list(updated.body)
        aligned = len(body) == len(original.body)
        if isinstance(original, cst.Module) and not self.context.chunk_ends_block:
            aligned = False
        for index, guard in exit_guards(original.body, self.qualified_name):
            if guard not in self.tests:
                continue
            rest = (original.body[index + 1 :], body[index + 1 :])
            statement = body[index] if aligned else None
            if isinstance(guard, cst.Assert):
                line = original.body[index]
                small = list(getattr(statement, "body", ()))
                if len(small) != len(line.body) or not isinstance(  # type: ignore
                    statement, cst.SimpleStatementLine
                ):
                    self._decide_test(guard, guard, kept=True)
                    continue
                at = line.body.index(guard)  # type: ignore[attr-defined]
                small[at] = self._decide_test(guard, small[at], rest)
                body[index] = statement.with_changes(body=small)
            elif isinstance(statement, cst.If):
                body[index] = self._decide_test(guard, statement, rest)
            else:
                self._decide_test(guard, guard, kept=True)
        return updated.with_changes(body=body)

    def _decide_test(self, original, updated, guarded=None, kept=False):
        """``torch.cuda.is_available()`` in a test becomes portable only when what it
        guards no longer needs CUDA once every pass has rewritten it. What an early
        exit guards is the rest of its block (``guarded``: those statements, as
        written and as rewritten); it is decided with its block."""
        if guarded is None and original in self.early and not kept:
            return updated
        checks = self.tests.pop(original, ())
        if not checks:
            return updated
        unseen = kept and guarded is None  # an early exit whose block is not in view
        if original in self.fallbacks:
            for check in checks:
                self.report(check, "TP301", FALLBACK)
            return updated
        if guarded is not None or kept:
            written, rewritten = guarded or ((), ())
            recognized = False  # the report-only pass sees no block: reported here
            kept = (
                kept
                or cuda_only_code(written, self.qualified_name)
                or self._cuda_only(getattr(updated, "body", None), *rewritten)
            )
        else:
            recognized = guards_cuda_only_code(original, self.qualified_name)
            kept = self._cuda_only(updated.body, updated.orelse)
        if recognized or kept:
            # A CUDA-only guard stays. The report-only pass reports the guards it
            # recognizes (TP910); the others are reported here, never left silent.
            message = KEPT_EXIT if unseen else KEPT_GUARD
            if not recognized:
                for check in checks:
                    self.report(check, "TP301", message)
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
        AMP, which has a portable form), a `.cuda()`, a "cuda" string, a string
        naming a torch.cuda type, a CUDA-only library, or a function of the program's
        named for CUDA (`dtw_cuda(x)`); what runs only under
        ``if DEVICE.type == "cuda":`` does not count."""
        for part in parts:
            if part is None:
                continue
            if calls_cuda_named(part, self.qualified_name):
                return True
            for node in self._outside_cuda_branches(part):
                if isinstance(node, cst.SimpleString):
                    value = node.evaluated_value
                    if isinstance(value, str) and (
                        _CUDA_LITERAL.fullmatch(value)
                        or value.startswith("torch.cuda.")  # "torch.cuda.FloatTensor"
                    ):
                        return True
                elif isinstance(node, cst.Call) and attribute_name(node) == "cuda":
                    if not self.qualified_name(node.func):
                        return True
                elif isinstance(node, (cst.Name, cst.Attribute)):
                    name = self.qualified_name(node) or ""
                    if under(name, CUDA_ONLY_MODULES):
                        return True
                    if name.startswith("torch.cuda.") and not under(
                        name, ("torch.cuda.amp", "torch.cuda.is_available")
                    ):
                        return True
        return False

    def _outside_cuda_branches(self, node: cst.CSTNode):
        """``node`` and what is below it, but for the test and body of each ``if
        DEVICE.type == "cuda":`` (its ``else`` included)."""
        stack = [node]
        while stack:
            current = stack.pop()
            yield current
            if isinstance(current, cst.If) and is_cuda_test(
                current.test, self.context.device_name
            ):
                stack.extend([current.orelse] if current.orelse else [])
            else:
                stack.extend(reversed(current.children))

    def _cuda_call(self, original: cst.Call, updated: cst.Call, name: str):
        row = self._row(name)
        if row is None:
            return updated
        short = canonical(name)[len("torch.") :]
        if row.rewrite == "report":
            self.report(original, row.code, f"`torch.{short}`: {row.advice}")
            return updated
        return getattr(self, f"_shape_{row.rewrite}")(original, updated, row, short)

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
        args = _mapped_arguments(updated.args, catalog.PARAMS.get(row.name))
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

    def _shape_stream(self, original, updated, row: Row, short: str):
        """``torch.cuda.Stream(...)`` through the device module; torch.cpu's stream
        takes a priority only, so a stream given anything else (a device) is made
        on an accelerator alone, and is torch.cpu's no-op stream on the CPU."""
        if not self._applied(original, row.code):
            return updated
        call = updated.with_changes(func=self.expr(row.portable))
        if all(
            a.keyword is not None and a.keyword.value in CPU_STREAM_KEYWORDS
            for a in updated.args
        ):
            return call
        return self._guarded(original, call, row.cpu)  # type: ignore[arg-type]

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
        if self.in_accelerated_branch():
            return call
        quote = "'" if self.quotes and '"' in self.quotes[-1] else '"'
        node = self.expr(
            "({call} if " + _guard(quote) + " else " + cpu + ")", call=call
        )
        if original in self.context.bare:
            node = node.with_changes(lpar=[], rpar=[])
        self.statements[node] = call  # its value is unused if it is a statement
        return node

    def _shape_device_index(self, original, updated, row: Row, short: str):
        value = _device_index_arg(original)
        if value is None:
            self.report(original, row.code)
            return updated
        literal = _is_name(value, "None") or self.objects.kind(value) == INT
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
            return self.statements.get(statement.value)
        return None

    def _if(self, call: cst.BaseExpression, comment=None, **changes) -> cst.If:
        """``if DEVICE.type != "cpu":`` over ``call`` (and its line's comment)."""
        line = cst.SimpleStatementLine([cst.Expr(call)])
        if comment is not None:
            line = line.with_changes(trailing_whitespace=comment)
        node = cst.If(
            test=self.expr(_guard()), body=cst.IndentedBlock([line]), **changes
        )
        self.made.add(node)
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
                statement in self.made
                and previous in self.made
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
                self.made.add(merged)
                out[-1] = merged
            else:
                out.append(statement)
        return out

    def _merge_made(self, block):
        """``block`` (a module or an indented block) with its guard ``if``s merged."""
        if not any(s in self.made for s in block.body):
            return block
        return block.with_changes(body=self._merged(block.body))

    # -- methods of CUDA events and streams (TP305, TP307) ----------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.objects.enter_scope(node, is_class=False)

    def leave_FunctionDef(self, original_node, updated_node):
        self.objects.leave_scope()
        return updated_node

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.objects.enter_scope(node, is_class=True)

    def leave_ClassDef(self, original_node, updated_node):
        self.objects.leave_scope()
        return updated_node

    def _object_method(self, original: cst.Call, updated: cst.Call):
        """A method torch.cpu's no-op events and streams lack, called on an object
        known to be a CUDA event or stream (``x.record_stream(stream)``: the
        argument): kept for accelerators, its CPU value on the CPU."""
        method = attribute_name(original)
        args = original.args
        if method == "record_stream":
            known = len(args) == 1 and self.objects.kind(args[0].value) == STREAM
            row = METHODS[method] if known else None
        else:
            kind = self.objects.kind(original.func.value)  # type: ignore[attr-defined]
            row = METHODS[method] if kind == METHOD_KINDS[method] else None
        if method == "elapsed_time" and len(args) != 1:
            row = None
        if original in self.guarded:
            return updated
        if row is None:
            if method == "elapsed_time" and self._maybe_cuda_event():
                self.report(original, "TP307", UNKNOWN_EVENT)
            return updated
        message = METHOD_MESSAGES.get(method, "")
        if not self.record_and_decide(original, row.code, message):
            return updated
        return self._guarded(original, updated, row.cpu)  # type: ignore[arg-type]

    def _maybe_cuda_event(self) -> bool:
        """The module makes CUDA events and defines no ``elapsed_time`` of its own
        (a host timer class of the user's)."""
        facts = self.context.facts
        return (
            self.uses_events
            and "elapsed_time" not in facts.functions
            and "elapsed_time" not in facts.stored_attributes
        )


# Methods of CUDA objects that torch.cpu's stand-ins lack: the catalogue's rows.
# Methods of CUDA events and streams kept for accelerators, with their CPU value
# (`Tensor.get_device` is a method row too, rewritten where it is a device argument).
METHODS: Dict[str, Row] = {
    row.name.rsplit(".", 1)[1]: row
    for row in catalog.rows_of("cuda_runtime")
    if row.kind == "method" and row.cpu is not None
}
EVENT, STREAM = "event", "stream"
INT = "int"  # a device index (`with torch.cuda.device(i):`, TP303)
# Calls that give an int.
INT_CALLS = {
    "torch.cuda.current_device",
    "torch.cuda.device_count",
    "torch.accelerator.current_device_index",
    "torch.accelerator.device_count",
}
INT_BUILTINS = {"int", "len"}
INT_METHODS = {"get_device"}  # Tensor.get_device()
# Which object each method belongs to (record_stream: what its argument is).
METHOD_KINDS = {
    name: STREAM if row.name.startswith(("Stream.", "Tensor.")) else EVENT
    for name, row in METHODS.items()
}
# torch.cuda calls (after ALIASES) that make an event or a stream.
# What torch.cpu.Stream(...) takes (checked on torch 2.13: `priority` alone).
CPU_STREAM_KEYWORDS = {"priority"}
MAKERS = {
    "torch.cuda.Event": EVENT,
    "torch.cuda.Stream": STREAM,
    "torch.cuda.current_stream": STREAM,
    "torch.cuda.default_stream": STREAM,
}
METHOD_MESSAGES = {
    "synchronize": "`.synchronize()` of a CUDA stream: torch.cpu's no-op stream has "
    "none; kept for accelerators",
    "query": "`.query()` of a CUDA stream: torch.cpu's no-op stream has none; True "
    "on the CPU",
    "record_stream": "`.record_stream(stream)`: CPU tensors have none; kept for "
    "accelerators",
}
UNKNOWN_EVENT = (
    "`.elapsed_time()` of an object torchport cannot tell is a CUDA event: left as it "
    'is; CPU events cannot time (use `... if DEVICE.type != "cpu" else float("nan")` '
    "or a host timer)"
)
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
        counts = isinstance(node.iter, cst.Call) and _is_name(node.iter.func, "range")
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
