"""TP5xx: torch.distributed code that assumes NVIDIA: the "nccl" backend, DDP's
``device_ids`` and ``mp.spawn(nprocs=torch.cuda.device_count())``.

A backend *position* (the backend argument of ``init_process_group``/``new_group``,
a ``backend=`` keyword, a ``*backend*`` variable, parameter, option or dict value)
classifies the ``"nccl"`` literal below it; the literal is rewritten on the way up
to ``get_default_backend_for_device(_DEVICE())``, which is "nccl" on CUDA and "gloo"
on the CPU. Tests of the backend (``== "nccl"``, ``is_nccl_available()``) are
reported: what they guard is usually NCCL-specific.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from codemod import catalog
from codemod.passes.backend_pairs import (
    DEVICE_KEYED,
    KEYED_LEFT,
    device_backends,
    is_device_keyed,
    keyed_template,
)
from codemod.passes.base import Pass, option_name, target_name, walk
from codemod.passes.guards import AVAILABILITY, AcceleratedBranches, without_guards
from codemod.rules.distributed import RULES

# Callee (qualified name) -> positional index of its backend argument. Data, not code.
BACKEND_POSITIONS: Dict[str, int] = {
    "torch.distributed.init_process_group": 0,
    "torch.distributed.distributed_c10d.init_process_group": 0,
    "torch.distributed.new_group": 2,
    "torch.distributed.distributed_c10d.new_group": 2,
    "torch.distributed.new_subgroups": 3,
    "torch.distributed.distributed_c10d.new_subgroups": 3,
    "torch.distributed.new_subgroups_by_enumeration": 2,
    "torch.distributed.distributed_c10d.new_subgroups_by_enumeration": 2,
}
NCCL_NAMES = {
    "torch.distributed.Backend.NCCL",
    "torch.distributed.distributed_c10d.Backend.NCCL",
}
NCCL_AVAILABLE = {
    "torch.distributed.is_nccl_available",
    "torch.distributed.distributed_c10d.is_nccl_available",
}
# Callee -> (positional index, keyword) of the arguments DDP takes device ids in.
DDP = {
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
}
DDP_DEVICE_ARGS = {"device_ids": 1, "output_device": 2}
SPAWN = {
    "torch.multiprocessing.spawn",
    "torch.multiprocessing.spawn.spawn",
    "torch.multiprocessing.start_processes",
    "torch.multiprocessing.spawn.start_processes",
}
SPAWN_NPROCS = 2  # spawn(fn, args=(), nprocs=1, ...)
# nn.DataParallel and its function: CUDA's scatter (TP506).
DATA_PARALLEL = set(catalog.names_of("distributed")) - {
    n for r in catalog.rows_of("distributed") if r.code != "TP506" for n in r.names
}
GLOO = (
    '`"gloo"` runs collectives of CPU and CUDA tensors only: on another accelerator a '
    "collective of a device tensor raises; choose the backend by hand (see `torchport "
    "rule TP507`)"
)
DATA_PARALLEL_ADVICE = (
    "`nn.DataParallel` scatters with CUDA only (another accelerator raises in its "
    "forward): keep it behind `if torch.cuda.device_count() > 1:`, or use "
    "DistributedDataParallel"
)
# What keeps DataParallel to CUDA where it tests an `if` around it (TP301 keeps it).
CUDA_TESTS = {"torch.cuda.device_count", "torch.cuda.is_available"}
DEVICE_COUNT = {"torch.cuda.device_count", "torch.accelerator.device_count"}


def _nccl_literal(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.SimpleString) and node.evaluated_value == "nccl"


def _mentions_nccl(node: cst.CSTNode) -> bool:
    return (
        isinstance(node, cst.SimpleString)
        and isinstance(node.evaluated_value, str)
        and "nccl" in node.evaluated_value
    )


def _gloo_literal(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.SimpleString) and node.evaluated_value == "gloo"


def _backend_name(name: str) -> bool:
    return "backend" in name.lower()


def _argument(call: cst.Call, keyword: str, position: int) -> Optional[cst.Arg]:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
    return positional[position] if position < len(positional) else None


class Distributed(AcceleratedBranches, Pass):
    RULES = RULES
    # DDP and mp.spawn matter only in files that mention CUDA or NCCL.
    TRIGGER = catalog.trigger_of("distributed")
    HITS = re.compile(r"device_ids|output_device")
    # mp.spawn's nprocs is followed back to its device_count() through variables.
    CONTEXT = re.compile(r"spawn|start_processes")
    # DDP's device_ids need the branch around them (an accelerator's needs no guard).
    FUNCTION_CONTEXT = re.compile(r"device_ids|output_device")

    def __init__(self, context) -> None:
        super().__init__(context)
        self.backends: Set[cst.CSTNode] = set()  # "nccl" literals in a backend position
        self.gloo: Set[cst.CSTNode] = set()  # "gloo" in one, where the module uses CUDA
        self.uses_cuda = "cuda" in context.facts.identifiers
        self.collapse: Set[cst.CSTNode] = set()  # "nccl" if is_available() else "gloo"
        self.ignored: Set[cst.CSTNode] = set()  # literals reported by their parent
        self.ddp_args: Set[cst.CSTNode] = set()
        self.counts: Set[cst.CSTNode] = set()  # device_count() calls that set nprocs
        self.cuda_tests: List[bool] = []  # enclosing `if`s: does its test ask CUDA
        spawn_names = [
            local for local, target in context.facts.imports.items() if target in SPAWN
        ]
        self._spawn_words = re.compile(
            "|".join([self.CONTEXT.pattern, *map(re.escape, spawn_names)])
        )
        # `X` of an `import torch.distributed as X`
        forms = context.facts.import_forms.items()
        self.dist_alias = next(
            (
                local
                for local, form in forms
                if form == ("torch.distributed", None, local)
            ),
            None,
        )

    def visit_Module(self, node: cst.Module) -> None:
        # The scan walks the whole chunk: only where the chunk can call spawn.
        if self._spawn_words.search(self.context.chunk_text):
            self._find_spawn_counts(node)

    # -- what to emit -----------------------------------------------------------
    def _backend_call(self) -> str:
        module = self.dist_alias or "{torch}.distributed"
        return f"{module}.get_default_backend_for_device({{device}})"

    def _default_backend(self) -> cst.BaseExpression:
        return self.expr(self._backend_call())

    def _device_keyed(self, original: cst.SimpleString, pairs) -> cst.BaseExpression:
        quote = original.quote if original.quote in ('"', "'") else '"'
        accelerated = self.in_accelerated_branch()
        template = keyed_template(quote, pairs, self._backend_call(), accelerated)
        if " if " in template and original not in self.context.bare:
            template = f"({template})"
        return self.expr(template)

    # -- classification, top-down -----------------------------------------------
    def _mark_backend(self, value: cst.BaseExpression) -> None:
        if _mentions_nccl(value) or self.qualified_name(value) in NCCL_NAMES:
            self.backends.add(value)
        elif _gloo_literal(value) and self.uses_cuda:
            self.gloo.add(value)
        elif isinstance(value, cst.IfExp) and not self._is_availability_choice(value):
            for branch in (value.body, value.orelse):
                self._mark_backend(branch)

    def _is_availability_choice(self, node: cst.IfExp) -> bool:
        """``"nccl" if torch.cuda.is_available() else "gloo"``: a backend anywhere."""
        return (
            _nccl_literal(node.body)
            and _gloo_literal(node.orelse)
            and isinstance(node.test, cst.Call)
            and self.callee(node.test) in AVAILABILITY
        )

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self.note_flag(node)
        if self._is_availability_choice(node):
            self.collapse.add(node)
            self.ignored.add(node.body)

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.callee(node)
        if callee in BACKEND_POSITIONS:
            arg = _argument(node, "backend", BACKEND_POSITIONS[callee])
            if arg is not None:
                self._mark_backend(arg.value)
        elif callee in DDP:
            for keyword, position in DDP_DEVICE_ARGS.items():
                arg = _argument(node, keyword, position)
                if arg is None or self._guarded(arg.value):
                    continue
                if not self.in_accelerated_branch():  # else: not a CPU module there
                    self.ddp_args.add(arg)
        elif callee in DATA_PARALLEL and not any(self.cuda_tests):
            self.report(node, "TP506", DATA_PARALLEL_ADVICE)
        elif callee in NCCL_AVAILABLE:
            self.report(
                node,
                "TP502",
                "`is_nccl_available()` is true only with NCCL: to "
                "pick a backend use `torch.distributed.get_default_backend_for_"
                "device(_DEVICE())`; to test one, `dist.is_backend_available(name)`",
            )
        for arg in node.args:
            if arg.keyword is not None and _backend_name(arg.keyword.value):
                self._mark_backend(arg.value)
            elif arg.keyword is not None and arg.keyword.value == "default":
                if _backend_name(option_name(node)):
                    self._mark_backend(arg.value)

    def visit_If_body(self, node: cst.If) -> None:
        super().visit_If_body(node)
        self.cuda_tests.append(
            any(
                isinstance(n, cst.Call) and self.callee(n) in CUDA_TESTS
                for n in walk(node.test)
            )
        )

    def leave_If_body(self, node: cst.If) -> None:
        super().leave_If_body(node)
        self.cuda_tests.pop()

    @staticmethod
    def _guarded(value: cst.BaseExpression) -> bool:
        """Already ``X if <test> else None`` (torchport's output, or by hand), or None."""
        if isinstance(value, cst.IfExp):
            value = value.orelse
        return isinstance(value, cst.Name) and value.value == "None"

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(_backend_name(target_name(t.target)) for t in node.targets):
            self._mark_backend(node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and _backend_name(target_name(node.target)):
            self._mark_backend(node.value)

    def visit_Param(self, node: cst.Param) -> None:
        if node.default is not None and _backend_name(node.name.value):
            self._mark_backend(node.default)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        self.ignored.add(node.key)  # a key names something; it is not a backend
        if isinstance(node.key, cst.SimpleString) and _backend_name(
            str(node.key.evaluated_value)
        ):
            self._mark_backend(node.value)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        operands = [node.left] + [c.comparator for c in node.comparisons]
        nccl = [
            o
            for o in operands
            if _nccl_literal(o) or self.qualified_name(o) in NCCL_NAMES
        ]
        if nccl:
            self.ignored.update(nccl)
            self.report(node, "TP502")

    # -- mp.spawn(nprocs=torch.cuda.device_count()) --------------------------------
    def _is_count(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Call) and self.callee(node) in DEVICE_COUNT

    def _find_spawn_counts(self, module: cst.Module) -> None:
        # (scope, name) -> values assigned to the name there; a scope is a function
        # (or lambda) node, None for the module.
        values: Dict[Tuple[Optional[cst.CSTNode], str], List[cst.BaseExpression]] = {}
        spawns: List[Tuple[cst.Call, Optional[cst.CSTNode]]] = []
        stack: List[Tuple[cst.CSTNode, Optional[cst.CSTNode]]] = [(module, None)]
        while stack:
            node, scope = stack.pop()
            if (
                isinstance(node, cst.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0].target, cst.Name)
            ):
                key = (scope, node.targets[0].target.value)
                values.setdefault(key, []).append(node.value)
            elif isinstance(node, cst.Call) and self.callee(node) in SPAWN:
                spawns.append((node, scope))
            inner = node if isinstance(node, (cst.FunctionDef, cst.Lambda)) else scope
            stack.extend((child, inner) for child in node.children)
        for call, scope in spawns:
            nprocs = _argument(call, "nprocs", SPAWN_NPROCS)
            if nprocs is not None:
                self._follow(nprocs.value, scope, values, depth=3)
            spawn_args = _argument(call, "args", 1)
            if spawn_args is not None and isinstance(spawn_args.value, cst.Tuple):
                for element in spawn_args.value.elements:
                    if self._is_count(element.value):
                        self.counts.add(element.value)

    def _follow(self, value: cst.BaseExpression, scope, values, depth: int) -> None:
        """Find the device_count() call ``value`` is, or is assigned from: through
        the assignments to a name in the scope it is read in, or else the module's."""
        if self._is_count(value):
            self.counts.add(value)
        elif isinstance(value, cst.Name) and depth:
            if (scope, value.value) not in values:
                scope = None
            for assigned in values.get((scope, value.value), ()):
                self._follow(assigned, scope, values, depth - 1)

    # -- rewriting, bottom-up ---------------------------------------------------------
    def leave_SimpleString(self, original_node, updated_node):
        if original_node in self.gloo and original_node not in self.ignored:
            self.report(original_node, "TP507", GLOO)
            return updated_node
        if not _mentions_nccl(original_node) or original_node in self.ignored:
            return updated_node
        if original_node in self.backends and _nccl_literal(original_node):
            if self.record_and_decide(original_node, "TP501"):
                return self._default_backend()
            return updated_node
        pairs = device_backends(original_node)
        if original_node in self.backends and pairs is not None:
            if self.record_and_decide(original_node, "TP501", DEVICE_KEYED):
                return self._device_keyed(original_node, pairs)
            return updated_node
        if original_node in self.backends and is_device_keyed(original_node):
            self.report(original_node, "TP503", KEYED_LEFT)
        elif _nccl_literal(original_node) or original_node in self.backends:
            self.report(original_node, "TP503")
        return updated_node

    def leave_Attribute(self, original_node, updated_node):
        if (
            original_node in self.ignored
            or self.qualified_name(original_node) not in NCCL_NAMES
        ):
            return updated_node
        if original_node in self.backends:
            if self.record_and_decide(original_node, "TP501"):
                return self._default_backend()
            return updated_node
        self.report(original_node, "TP503")
        return updated_node

    def leave_IfExp(self, original_node, updated_node):
        if original_node in self.collapse and self.record_and_decide(
            original_node, "TP501"
        ):
            return self._default_backend()
        return updated_node

    def leave_Arg(self, original_node, updated_node):
        if original_node not in self.ddp_args:
            return updated_node
        message = (
            ""
            if original_node.keyword is None
            or original_node.keyword.value == ("device_ids")
            else "`output_device=` goes with `device_ids=`, which DDP rejects for a CPU module"
        )
        if not self.record_and_decide(original_node, "TP504", message):
            return updated_node
        return updated_node.with_changes(
            value=self.expr(
                '{value} if {device}.type != "cpu" else None',
                value=without_guards(updated_node.value, self.context.device_name),
            )
        )

    def leave_Call(self, original_node, updated_node):
        if original_node in self.counts and self.record_and_decide(
            original_node, "TP505"
        ):
            return self.expr("max({count}, 1)", count=updated_node)
        return updated_node
