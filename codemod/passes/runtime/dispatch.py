"""The runtime pass: what it visits, how it classifies what it meets, and each site
sent to the rewrite its catalogue row names (``shapes.SHAPES[row.rewrite]``).

Top-down it notes what a site's rewrite depends on: the ``is_available()`` tests
(``availability``), the indices passed as a device, the names used other than by
calling them, the scopes whose bindings tell events and streams (``bindings``).
Bottom-up it rewrites each call through its row's shape, and each statement made of
a guarded call into an ``if`` (``cpu_guard``).
"""

from __future__ import annotations

import re
from typing import Dict, Optional, Set

import libcst as cst

from codemod import catalog
from codemod.catalog import Row, under
from codemod.passes.guards import AcceleratedBranches, is_cuda_test, is_guard
from codemod.passes.base import Pass, attribute_name, walk
from codemod.passes.device_tables import cuda_entries
from codemod.passes.runtime.availability import AvailabilityTests
from codemod.passes.runtime.bindings import CudaObjects
from codemod.passes.runtime.cpu_guard import CpuGuard
from codemod.passes.runtime.per_device import Loops
from codemod.passes.runtime.seeds import SEED_LINES, repeated_seeds
from codemod.passes.runtime.shapes import shape_of
from codemod.passes.runtime.tables import (
    API,
    ELSEWHERE,
    GET_DEVICE,
    METHODS,
    OWNER,
    UNKNOWN,
    canonical,
)
from codemod.rules.runtime import RULES

# Every row of the pass names a rewrite that exists: checked once, here.
for _row in (*catalog.rows_of(OWNER), UNKNOWN):
    shape_of(_row.rewrite)
# Words of a module that makes CUDA streams (`uses_events` tells of events).
OBJECT_MAKERS = {"Stream", "current_stream", "default_stream"}
# An index passed as a device (`device=torch.cuda.current_device()`) is rewritten so,
# whatever its row's usual rewrite.
INDEX_AS_DEVICE = shape_of("index_as_device")


class CudaRuntime(AcceleratedBranches, Pass):
    RULES = RULES
    OWNER = OWNER  # whose rows of the catalogue it rewrites
    # elapsed_time: timing lines rarely say "cuda" themselves.
    TRIGGER = catalog.trigger_of(OWNER)
    # A method of an event or stream is decided by the object's binding: the pass
    # sees its whole top-level statement (a variable of a function, an attribute
    # set in __init__). `torch.cuda.synchronize()` needs no binding, nor a call's
    # result (`current_stream().synchronize()`, or the emitted
    # `torch.accelerator.synchronize()`: a second run must chunk as the first).
    CONTEXT = re.compile(
        r"elapsed_time|record_stream|\.record\("
        r"|(?<!cuda)(?<!accelerator)(?<!\))\.(?:synchronize|query)\("
        r"|cuda\.device\(|(?:cuda|cpu)\.stream\("
    )

    @classmethod
    def hits_in(cls, source: str):
        # A CUDA seed is decided with the torch.manual_seed before it (``seeds``).
        return SEED_LINES if "cuda.manual_seed" in source else None

    def __init__(self, context) -> None:
        super().__init__(context)
        self.skip: Set[cst.CSTNode] = set()  # not references: handled or not names
        # Methods of events and streams already guarded (by a first run).
        self.guarded: Set[cst.CSTNode] = set()
        self.guard = CpuGuard(self)  # the guards emitted
        # CUDA events and streams known by their binding (see CudaObjects).
        self.objects = CudaObjects(
            self.qualified_name, context.facts.bound, context.source
        )
        self.availability = AvailabilityTests(self)
        self.renamed: Dict[cst.CSTNode, Row] = {}  # names replaced by another name
        # Calls whose int result is passed as a device: `current_device()`,
        # `x.get_device()` (-1 for a CPU tensor), with their rows.
        self.as_device: Dict[cst.Call, Row] = {}
        # CUDA seeds that repeat a torch.manual_seed (``seeds``), and those removed.
        self.repeated_seeds: Set[cst.Call] = set()
        self.removed: Set[cst.Call] = set()
        self.loops = Loops()  # calls that become a loop (``per_device``)
        # What runs under `_DEVICE().type == "cuda"` only (kept for CUDA by a first run).
        self.cuda_branch: Set[cst.CSTNode] = set()
        # Calls a `with` enters, bound to no name (`with torch.cuda.stream(s):`).
        self.with_items: Set[cst.CSTNode] = set()
        words = context.facts.identifiers
        self.uses_events = "Event" in words and "cuda" in words
        # Comprehension targets are followed only where an event or stream is made.
        self.makes_objects = self.uses_events or bool(words & OBJECT_MAKERS)

    def row(self, name: str) -> Optional[Row]:
        """The table's row for a torch.cuda name; None when another pass owns it."""
        if under(name, ELSEWHERE):  # `torch.cuda.memory._record_memory_history`
            return None
        name = canonical(name)
        if under(name, ELSEWHERE) or name == "torch.cuda":
            return None
        return API.get(name, UNKNOWN)

    def needs_accelerator(self, test: cst.BaseExpression) -> bool:
        """Also ``if x.is_cuda:``: its body runs only with a tensor on CUDA, or, once
        TP202 rewrites the test, on the accelerator."""
        if isinstance(test, cst.Attribute) and test.attr.value == "is_cuda":
            return True
        return super().needs_accelerator(test)

    # -- classification, top-down ---------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        self.skip.update(walk(node))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.skip.update(walk(node))

    def visit_If(self, node: cst.If) -> None:
        self.availability.note_test(node, node.test)
        self.availability.note_fallback(node)
        if is_guard(node.test, self.context.device_name):  # guarded by a first run
            self.guarded.update(
                n
                for n in walk(node.body)
                if isinstance(n, cst.Call) and attribute_name(n) in METHODS
            )

    def visit_IfExp(self, node: cst.IfExp) -> None:
        if is_cuda_test(node.test, self.context.device_name):
            self.cuda_branch.update(walk(node.body))
        self.availability.note_test(node, node.test)
        self.availability.note_fallback(node)
        self.note_flag(node)
        if isinstance(node.body, cst.Call) and attribute_name(node.body) in METHODS:
            self.guarded.add(node.body)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is None:
            self.with_items.add(node.item)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self.guard.quotes.append(node.quote)

    def leave_FormattedString(self, original_node, updated_node):
        self.guard.quotes.pop()
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
        if self.callee(value) == "torch.cuda.current_device":
            self.as_device[value] = API["torch.cuda.current_device"]
        elif (
            attribute_name(value) == "get_device" and not self.callee(value) and not own
        ):
            self.as_device[value] = GET_DEVICE

    def visit_Dict(self, node: cst.Dict) -> None:
        # {"cuda": torch.cuda.empty_cache, "xpu": ...}[dev.type](): CUDA's own entry
        self.skip.update(n for value in cuda_entries(node) for n in walk(value))

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
        row = self.row(name)
        if row is None:
            return
        short = name[len("torch.") :]  # as written: torch.cuda.memory._snapshot
        if row.rewrite == "report":
            self.report(node, row.code, f"`torch.{short}`: {row.advice}")
        elif row.rewrite == "name":
            if self.applied(node, row.code, min_torch=row.min_torch):
                self.renamed[node] = row
        else:
            self.report(
                node,
                row.code,
                f"`torch.{short}` used as a value: only calls are rewritten",
            )

    def visit_Module(self, node: cst.Module) -> None:
        self.availability.note_exits(node)
        self.repeated_seeds |= repeated_seeds(node.body, self.qualified_name)
        at = self.context
        self.objects.enter_chunk(
            node, at.col_offset == 0, at.line_offset, at.chunk_text
        )

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.availability.note_exits(node)
        self.repeated_seeds |= repeated_seeds(node.body, self.qualified_name)

    def visit_Assert(self, node: cst.Assert) -> None:
        self.availability.note_assert(node)

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

    def _comprehension(self, node) -> None:
        if self.makes_objects:  # `for s in starts` in it binds `s` to an event
            self.objects.enter_comprehension(node)

    visit_ListComp = visit_SetComp = visit_DictComp = _comprehension
    visit_GeneratorExp = _comprehension

    # -- rewriting, bottom-up -------------------------------------------------
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        row = self.as_device.get(original_node)
        if row is not None:
            return INDEX_AS_DEVICE(self, original_node, updated_node, row, "")
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
            if self.availability.defers(original_node):
                self.availability.defer(original_node, updated_node)  # with its `if`
                return updated_node
            return self.rewrite_call(original_node, updated_node, name)
        if name in API:  # torch.random.fork_rng
            return self.rewrite_call(original_node, updated_node, name)
        method = attribute_name(original_node)
        if method in METHODS:
            row = METHODS[method]
            return shape_of(row.rewrite)(self, original_node, updated_node, row, method)
        return updated_node

    def rewrite_call(self, original: cst.Call, updated: cst.Call, name: str):
        """A call of ``name``, rewritten as its row says."""
        row = self.row(name)
        if row is None:
            return updated
        short = name[len("torch.") :]  # as written: torch.cuda.memory._snapshot
        return shape_of(row.rewrite)(self, original, updated, row, short)

    def leave_If(self, original_node: cst.If, updated_node: cst.If):
        return self.availability.decide(original_node, updated_node)

    def leave_IfExp(self, original_node: cst.IfExp, updated_node: cst.IfExp):
        return self.availability.decide(original_node, updated_node)

    def leave_BinaryOperation(self, original_node, updated_node):
        return self.guard.hoist(original_node, updated_node)

    def leave_Module(self, original_node, updated_node):
        updated_node = self.availability.decide_exits(original_node, updated_node)
        return self.guard.merge(updated_node)

    def leave_IndentedBlock(self, original_node, updated_node):
        updated_node = self.availability.decide_exits(original_node, updated_node)
        return self.guard.merge(updated_node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.loops.note_line(node)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        expr = original_node.body[0]
        if getattr(expr, "value", None) in self.removed:  # a repeated seed
            return cst.RemoveFromParent()
        loop = self.loops.replace(original_node)
        if loop is not None:
            if isinstance(loop, cst.If):  # a guard: merged with the ones next to it
                self.guard.made.add(loop)
            return loop
        return self.guard.split_line(updated_node)

    def leave_SimpleStatementSuite(self, original_node, updated_node):
        return self.guard.split_suite(updated_node)

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

    # -- what the shapes ask ----------------------------------------------------
    def applied(
        self, original, code: str, message="", fix=None, min_torch=None, **decide
    ):
        """Record a site (a call, or a name); when it is fixed, schedule the removal
        of the import it came through if nothing else uses that import (``decide``:
        more of ``record_and_decide``'s arguments)."""
        if not self.record_and_decide(
            original, code, message, fix, min_torch, **decide
        ):
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

    def maybe_cuda_event(self) -> bool:
        """The module makes CUDA events and defines no ``elapsed_time`` of its own
        (a host timer class of the user's)."""
        facts = self.context.facts
        return (
            self.uses_events
            and "elapsed_time" not in facts.functions
            and "elapsed_time" not in facts.stored_attributes
        )
