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
from typing import Dict, List, Optional, Set, Union

import libcst as cst

from codemod import catalog
from codemod.catalog import Row, under
from codemod.passes._helpers import (
    cuda_only_code,
    exit_guards,
    fallback_checks,
    guards_cuda_only_code,
)
from codemod.passes.base import ACCELERATOR_TORCH, Pass, attribute_name, walk
from codemod.rules import EXAMPLE_BINDING, Fix, Rule, register

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
        '== "cuda" and not torch.cuda.is_available():`).',
    ),
    Rule(
        "TP302",
        "cuda-current-device",
        "`torch.cuda.current_device()` / `set_device()` only know CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="`current_device()` becomes `torch.accelerator.current_device_index()` and "
        "`set_device(i)` becomes `torch.accelerator.set_device_index(i)`, both behind "
        '`DEVICE.type != "cpu"` (index 0 and a no-op on the CPU).',
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
        "TP313",
        "cuda-tensor-type",
        "legacy `torch.cuda.*Tensor` types only know CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="`torch.cuda.FloatTensor([1, 2])` becomes `torch.tensor([1, 2], "
        "dtype=torch.float32, device=DEVICE)` and `torch.cuda.FloatTensor(2, 3)` "
        "`torch.empty(2, 3, dtype=torch.float32, device=DEVICE)`. Other uses (as a "
        "type, or with arguments that may be data or sizes) are reported.",
        why="The legacy constructors exist only for CUDA.",
        before=("import torch\n" "\n" "mask = torch.cuda.BoolTensor([True, False])"),
        after=EXAMPLE_BINDING
        + "mask = torch.tensor([True, False], dtype=torch.bool, device=DEVICE)",
        safety="Safe for list or tuple literals and integer sizes.",
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
TENSOR_TYPES = catalog.TENSOR_TYPES
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


def _tensor_form(call: cst.Call) -> Optional[str]:
    """ "data" for ``FloatTensor([...])``, "sizes" for ``FloatTensor(2, 3)``."""
    args = call.args
    if not all(a.keyword is None and not a.star for a in args):
        return None
    if len(args) == 1 and isinstance(
        args[0].value, (cst.List, cst.Tuple, cst.ListComp)
    ):
        return "data"
    if all(isinstance(a.value, cst.Integer) for a in args):
        return "sizes"
    return None


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
        self.quotes: List[str] = []  # enclosing f-string quotes
        # is_available() calls in an if-test, decided when the whole `if` is known.
        self.tests: Dict[cst.CSTNode, List[cst.Call]] = {}
        self.pending: Dict[cst.Call, cst.Call] = {}  # original -> updated
        # Early exits (`if not ...is_available(): return`, `assert ...`): decided
        # with the rest of their block, which is what they guard.
        self.early: Set[cst.CSTNode] = set()
        self.fallbacks: Set[cst.CSTNode] = set()  # tests that pick the CPU: kept
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
        self._note_fallback(node)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._note_test(node, node.test)
        self._note_fallback(node)
        body = node.body
        if isinstance(body, cst.Call) and attribute_name(body) == "elapsed_time":
            self.guarded.add(body)

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
        else:
            self.report(
                node,
                row.code,
                f"`torch.{short}` used as a value: only calls are rewritten",
            )

    # -- rewriting, bottom-up -------------------------------------------------
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        name = self.callee(original_node)
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

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._note_exits(node)

    def _note_exits(self, block: Union[cst.Module, cst.IndentedBlock]) -> None:
        for _, guard in exit_guards(block.body, self.qualified_name):
            self.early.add(guard)

    def visit_Assert(self, node: cst.Assert) -> None:
        if node in self.early:
            self._note_test(node, node.test)

    def leave_Module(self, original_node, updated_node):
        return self._decide_exits(original_node, updated_node)

    def leave_IndentedBlock(self, original_node, updated_node):
        return self._decide_exits(original_node, updated_node)

    def _decide_exits(self, original, updated):
        """Decide each early exit of a block with the statements after it. A module
        here is a chunk of the file (codemod.chunks), whose later statements are not
        in view: its early exits are kept (and reported). Asking for whole top-level
        statements instead (``CONTEXT``) made black drop blank lines away from the
        changes in real code, so that waits for the formatting to keep them."""
        body = list(updated.body)
        aligned = len(body) == len(original.body)
        if isinstance(original, cst.Module):
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
        naming a torch.cuda type, or a CUDA-only library."""
        for part in parts:
            if part is None:
                continue
            for node in walk(part):
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

    def _applied(self, original: cst.Call, code: str, message="", fix=None) -> bool:
        if not self.record_and_decide(original, code, message, fix):
            return False
        root = original.func
        while isinstance(root, cst.Attribute):
            root = root.value
        target = self.context.facts.imports.get(getattr(root, "value", ""), "")
        if "." in target:  # `from torch.cuda import x`, `from torch import cuda`
            module, imported = target.rsplit(".", 1)
            alias = root.value if root.value != imported else None  # type: ignore
            self.drop_import_if_unused(module, imported, alias)
        return True

    def _shape_call(self, original, updated, row: Row, short: str):
        if not self._applied(original, row.code):
            return updated
        call = updated.with_changes(func=self.expr(row.portable))
        if row.cpu is None:
            return call
        return self._guarded(original, call, row.cpu)

    def _guarded(self, original, call, cpu: str) -> cst.BaseExpression:
        """``(call if DEVICE.type != "cpu" else cpu)``, parenthesized only if needed."""
        quote = "'" if self.quotes and '"' in self.quotes[-1] else '"'
        node = self.expr(
            "({call} if " + _guard(quote) + " else " + cpu + ")", call=call
        )
        if original in self.bare:
            node = node.with_changes(lpar=[], rpar=[])
        if cpu == "None":
            self.statements[id(node)] = call
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

    def _shape_tensor(self, original, updated, row: Row, short: str):
        form = _tensor_form(original)
        if form is None:
            self.report(
                original,
                row.code,
                f"`torch.{short}(...)`: tell data from sizes, then use "
                "`torch.tensor(data, ...)` or `torch.empty(*sizes, ...)` with "
                "`device=DEVICE`",
            )
            return updated
        if not self._applied(original, row.code):
            return updated
        dtype = TENSOR_TYPES[short[len("cuda.") : -len("Tensor")]]
        keywords = f"dtype={{torch}}.{dtype}, device={{device}}"
        if form == "data":
            return self.expr(
                "{torch}.tensor({data}, " + keywords + ")", data=updated.args[0].value
            )
        sizes = [a.value.value for a in updated.args]  # type: ignore[attr-defined]
        shape = ", ".join(sizes) or "0"
        return self.expr("{torch}.empty(" + shape + ", " + keywords + ")")

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

    def leave_SimpleStatementLine(self, original_node, updated_node):
        """``x if DEVICE.type != "cpu" else None`` as a statement: a one-line ``if``."""
        body = updated_node.body
        if len(body) != 1 or not isinstance(body[0], cst.Expr):
            return updated_node
        call = self.statements.get(id(body[0].value))
        if call is None:
            return updated_node
        return cst.If(
            test=self.expr(_guard()),
            body=cst.SimpleStatementSuite(
                body=[cst.Expr(call)],
                trailing_whitespace=updated_node.trailing_whitespace,
            ),
            leading_lines=updated_node.leading_lines,
        )
