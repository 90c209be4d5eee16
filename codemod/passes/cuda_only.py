"""TP9xx: CUDA-only code, which has no portable equivalent: kept for CUDA, or reported.

CUDA graphs, nvtx, compute-capability checks, CUDA extensions, CUDA_VISIBLE_DEVICES,
pynvml, apex, the profiler's CUDA activity, torch.compile's CUDA-graph modes, and
``torch.cuda.is_available()`` guarding such code are reported with advice. What is
called for its effect alone is kept for CUDA: an nvtx mark or push/pop, or a
CUDA-only call (TP911), as a statement of its own goes behind ``if _DEVICE().type ==
"cuda":``, and ``with torch.cuda.nvtx.range(name):`` gets
``torch.profiler.record_function(name)`` where there is no CUDA (with unsafe fixes,
``record_function`` everywhere: the range leaves Nsight's trace for the PyTorch
profiler's). The names and their rules are the catalogue's (``codemod.catalog``);
its import sites are ``codemod.passes.cuda_only_imports``.
"""

from __future__ import annotations

import re
from typing import Dict, Optional, Set, Union

import libcst as cst

from codemod import catalog
from codemod.catalog import under
from codemod.passes.names import dotted_name
from codemod.passes.base import Pass, attribute_name, walk
from codemod.passes.cuda_only_code import cuda_only_guard_calls, is_sm_version
from codemod.passes.cuda_only_imports import REFERENCES, CudaOnlyImports
from codemod.passes.guards import and_operands, is_cuda_test
from codemod.rules.cuda_only import RULES as CUDA_ONLY_RULES
from codemod.rules.cuda_only_context import RULES as CONTEXT_RULES
from codemod.model.rule import Fix

# Per-name advice where it says more than the rule's message (the rules are
# REFERENCES, the catalogue's rows of this pass).
MESSAGES: Dict[str, str] = {
    n: row.advice for n, row in catalog.names_of("cuda_only").items() if row.advice
}
MODULES = {"pynvml", "torch.cuda.nvtx", "torch.cuda.graphs"}
NVTX_RANGE = "torch.cuda.nvtx.range"
# Calls made for their effect alone: as a statement, kept for CUDA behind a guard.
CUDA_ONLY_STATEMENTS = {
    n: code
    for n, code in REFERENCES.items()
    if code == "TP911" or n.startswith("torch.cuda.nvtx.")
}
CUDA_ONLY_STATEMENTS.pop("torch.cuda.nvtx", None)
CUDA_ONLY_STATEMENTS.pop(NVTX_RANGE, None)  # a context manager: see visit_WithItem
CUDART_EFFECTS = {"cudaProfilerStart", "cudaProfilerStop"}  # of torch.cuda.cudart()
EXTENSION_LOADERS = {
    "torch.utils.cpp_extension.load",
    "torch.utils.cpp_extension.load_inline",
}
COMPILE = "torch.compile"
CUDA_GRAPH_MODES = {"reduce-overhead", "max-autotune"}
VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"
AVAILABLE = "torch.cuda.is_available"
CUDA_TEST = '{device}.type == "cuda"'
RANGE_UNSAFE = (
    "nvtx ranges exist only in CUDA builds; `torch.profiler.record_function(name)` "
    "labels the region on every device (on CUDA in the PyTorch profiler's trace "
    "instead of Nsight's)"
)


# Literals reported wherever they occur (the compile modes only as `mode=`).
STRINGS = {
    n: row
    for n, row in catalog.names_of("cuda_only", ("string",)).items()
    if n != VISIBLE_DEVICES and n not in CUDA_GRAPH_MODES
}
PROFILER_KEYS = {n for n, row in STRINGS.items() if row.code == "TP908"}
LEGACY_TYPE = re.compile(r"torch\.cuda\.\w+Tensor")
LEGACY_TYPE_ADVICE = (
    "a CUDA tensor type named by a string; use `.to(dtype=..., device=_DEVICE())` "
    "(or `torch.set_default_dtype` and `torch.set_default_device(_DEVICE())`)"
)
WIDENED = (
    "`torch.accelerator.is_available()` guards CUDA-only code: on MPS, XPU, NPU or TPU "
    'it now runs it; test `_DEVICE().type == "cuda"` (or `torch.cuda.is_available()`) '
    "until the body is ported"
)


def _distinctive(name: str) -> str:
    """The end of a dotted name that other code rarely spells."""
    parts = name.split(".")
    if "_" in parts[-1] or "cuda" in parts[-1] or len(parts) == 1:
        return parts[-1]
    return ".".join(parts[-2:])


MODULE_VALUE = (
    "`torch.cuda` used as a value: what is called on it later cannot be followed; "
    "call `torch.accelerator` (or `torch.get_device_module(_DEVICE())`) by name instead"
)
AMBIGUOUS = (
    "`{name}` is imported and also bound otherwise in this module, so `{meant}` "
    "may not be what it is here: left as it is; give one of them another name"
)
NCCL_PREFIXES = ("NCCL_", "TORCH_NCCL_")
NCCL_ADVICE = (
    "this environment variable configures NCCL, CUDA's collectives; other backends' "
    "collectives ignore it"
)


def _patch_message(target: str) -> str:
    module, _, _ = target.partition(".torch.cuda.")
    if target.startswith("torch.cuda."):
        return (
            f"a test patches `{target}`; torchport leaves this file's calls of it, "
            "and those of the modules of the run this file imports, as they are, so "
            "that the patch still reaches them"
        )
    return (
        f"a test patches `{target}`, {module}'s view of torch.cuda: where {module} "
        "is in the same run, torchport leaves its calls of it as they are, so that "
        "the patch still reaches them; ported apart, they would not"
    )


class CudaOnly(CudaOnlyImports, Pass):
    RULES = CUDA_ONLY_RULES + CONTEXT_RULES
    TRIGGER = catalog.trigger_of("cuda_only")
    # A CUDA-only statement is guarded unless it already is: the pass sees the whole
    # function around it, `if _DEVICE().type == "cuda":` included.
    # Each name as its last part, or its last two where that part is a common word
    # (`nvtx.mark`, `profiler.start`, not every `start`); an imported alias of one
    # (`from torch.cuda.nvtx import mark`) is matched spelled out (transform).
    FUNCTION_CONTEXT = re.compile(
        r"from\s+torch\.cuda\b|"
        + "|".join(
            re.escape(_distinctive(n))
            for n in list(CUDA_ONLY_STATEMENTS) + [NVTX_RANGE, *CUDART_EFFECTS]
        )
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        self.type_arguments: Set[cst.CSTNode] = set()  # of `x.type(...)`: not ours

    def visit_Module(self, node: cst.Module) -> None:
        self.ranges: Set[cst.Call] = set()  # nvtx.range calls of a `with` item
        self.kept: Set[cst.CSTNode] = set()  # calls behind a kept CUDA-only guard
        self.effects: Dict[cst.Call, str] = {}  # CUDA-only statements -> rule
        self.handled: Set[cst.CSTNode] = set()  # names of those: not reported apart
        self.on_cuda: Set[cst.CSTNode] = set()  # behind `_DEVICE().type == "cuda"`
        self.kept_branch: Set[cst.CSTNode] = set()  # behind a CUDA test kept as it is
        self.unresolved_lines: Set[int] = set()
        self.receivers: Set[cst.CSTNode] = set()  # `x` and `name` of `x.name`
        self.patch_arguments: Set[cst.CSTNode] = set()  # reported with the patch

    # -- references -------------------------------------------------------------------
    def _reference(self, node: cst.CSTNode) -> bool:
        name = self.qualified_name(node)
        prefix = under(name, REFERENCES)
        if prefix is None:
            return True
        if name in MODULES and isinstance(node, cst.Name):
            return False  # the module itself (`pynvml = None`): its uses are the sites
        if name == NVTX_RANGE and node in self.ranges:
            return False  # rewritten (or reported) with its call
        if node in self.handled or node in self.on_cuda:
            return False  # guarded with its statement, or kept for CUDA already
        self.report(node, REFERENCES[prefix], MESSAGES.get(name, ""))  # type: ignore
        return False

    def _unresolved(self, node: cst.CSTNode) -> bool:
        """``amp.autocast()`` where ``amp`` is both ``torch.cuda.amp`` and something
        else in this module: reported, as no pass can tell which it is."""
        unresolved = self.context.facts.unresolved
        dotted = unresolved and dotted_name(node)
        if not dotted:
            return False
        head, dot, rest = dotted.partition(".")
        meant = unresolved.get(head, "") + dot + rest
        if not under(meant, ("torch.cuda",)):
            return False
        line = self.position(node)[0]
        if line not in self.unresolved_lines:  # once a line: one name, one cause
            self.unresolved_lines.add(line)
            self.report(node, "TP913", AMBIGUOUS.format(name=head, meant=meant))
        return True

    def _module_as_value(self, node: cst.CSTNode) -> None:
        """``backend = torch.cuda``, ``getattr(torch.cuda, name)``: what is called on
        it later cannot be followed."""
        if node in self.receivers or node in self.patch_arguments:
            return
        if self.qualified_name(node) == "torch.cuda":
            self.report(node, "TP913", MODULE_VALUE)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if self._unresolved(node):
            return False
        # `torch.cuda` in `torch.cuda.X`, and the name `cuda` of `x.cuda`: not values
        self.receivers.update((node.value, node.attr))
        self._module_as_value(node)
        if node.attr.value in PROFILER_KEYS:
            row = STRINGS[node.attr.value]
            self.report(node.attr, row.code, row.advice)
        if is_sm_version(node, self.qualified_name):
            self.report(node, "TP903")
            return False
        return self._reference(node)

    def visit_Name(self, node: cst.Name) -> bool:
        if self._unresolved(node):
            return False
        self._module_as_value(node)  # `from torch import cuda`, then `cuda` passed on
        return self._reference(node)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        call = node.item
        if (
            isinstance(call, cst.Call)
            and node.asname is None
            and self.callee(call) == NVTX_RANGE
            and call not in self.kept
            and len(call.args) == 1
            and call.args[0].keyword is None
            and not call.args[0].star
        ):
            self.ranges.add(call)
            self.ranges.add(call.func)

    def _type_arguments(self, node: cst.Call) -> None:
        # `x.get_device()` given as a device is the runtime pass's (TP302); a type
        # named by a string in `x.type(...)` or `torch.set_default_tensor_type(...)`
        # is the tensor-types pass's (TP313).
        if len(node.args) == 1 and (
            attribute_name(node) == "type"
            or self.callee(node) == "torch.set_default_tensor_type"
        ):
            self.type_arguments.add(node.args[0].value)

    def visit_Call(self, node: cst.Call) -> None:
        patched = self.context.patches and self.context.patches.get(self.position(node))
        if patched:
            self.report(node, "TP914", _patch_message(patched))
            self.patch_arguments.update(a.value for a in node.args)
        self.star_call(node)
        self._type_arguments(node)
        callee = self.callee(node)
        if callee in EXTENSION_LOADERS and self._builds_cuda(node):
            self.report(node, "TP904")
        elif callee == COMPILE:
            for arg in node.args:
                if (
                    arg.keyword is not None
                    and arg.keyword.value == "mode"
                    and isinstance(arg.value, cst.SimpleString)
                    and arg.value.evaluated_value in CUDA_GRAPH_MODES
                ):
                    self.report(arg, "TP909")

    @staticmethod
    def _builds_cuda(call: cst.Call) -> bool:
        """``load_inline(cuda_sources=...)`` or a .cu/.cuh file among the arguments."""
        if any(
            a.keyword is not None and a.keyword.value == "cuda_sources"
            for a in call.args
        ):
            return True
        return any(
            isinstance(s, cst.SimpleString)
            and isinstance(s.evaluated_value, str)
            and s.evaluated_value.endswith((".cu", ".cuh"))
            for arg in call.args
            for s in walk(arg)
        )

    def visit_If(self, node: cst.If) -> None:
        self._guard(node)
        self._cuda_branch(node)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._guard(node)
        self._cuda_branch(node)

    def _cuda_branch(self, node: Union[cst.If, cst.IfExp]) -> None:
        """What runs only on CUDA (`if _DEVICE().type == "cuda":`, as written here) is
        left alone; behind `torch.cuda.is_available()` it stays reported."""
        test = node.test
        kept = self.context.kept_for_cuda
        if is_cuda_test(test, self.context.device_name):
            self.on_cuda.update(walk(node.body))
        elif any(o in kept for o in and_operands(test)):
            # `if device.type == "cuda":` kept as written: its body needs no guard
            # of its own, and stays reported.
            self.kept_branch.update(walk(node.body))
        elif any(
            isinstance(n, cst.Call) and self.callee(n) == AVAILABLE for n in walk(test)
        ):
            self.kept.update(n for n in walk(node.body) if isinstance(n, cst.Call))

    # -- CUDA-only statements -----------------------------------------------------
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if len(node.body) != 1 or not isinstance(node.body[0], cst.Expr):
            return
        call = node.body[0].value
        if not isinstance(call, cst.Call) or call in self.kept or call in self.on_cuda:
            return
        code = self._effect(call)
        if code:
            self.effects[call] = code
            self.handled.update(walk(call.func))

    def _effect(self, call: cst.Call) -> Optional[str]:
        """The rule of a call made for a CUDA-only effect, else None."""
        code = CUDA_ONLY_STATEMENTS.get(self.callee(call) or "")
        if code:
            return code
        func = call.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in CUDART_EFFECTS
            and isinstance(func.value, cst.Call)
            and self.callee(func.value) == "torch.cuda.cudart"
        ):
            return "TP911"
        return None

    def leave_SimpleStatementLine(self, original_node, updated_node):
        """A CUDA-only statement: ``if _DEVICE().type == "cuda": <statement>``."""
        body = original_node.body
        if len(body) != 1 or not isinstance(body[0], cst.Expr):
            return updated_node
        call = body[0].value
        code = self.effects.get(call)  # type: ignore[arg-type]
        if code is not None and call in self.kept_branch:
            self.report(call, code)
            return updated_node
        if code is None or not self.record_and_decide(call, code):
            return updated_node
        return cst.If(
            test=self.expr(CUDA_TEST),
            body=cst.SimpleStatementSuite(
                body=updated_node.body,
                trailing_whitespace=updated_node.trailing_whitespace,
            ),
            leading_lines=updated_node.leading_lines,
        )

    def _guard(self, node: Union[cst.If, cst.IfExp]) -> None:
        calls = cuda_only_guard_calls(node, self.qualified_name)
        if calls:
            # nvtx is fine behind the kept guard, and rewriting it would make the
            # guard look portable to the next run.
            self.kept.update(n for n in walk(node.body) if isinstance(n, cst.Call))
        for call in calls:
            if self.callee(call) == "torch.accelerator.is_available":
                self.report(call, "TP910", WIDENED)
            else:
                self.report(call, "TP910")

    def leave_SimpleString(self, original_node, updated_node):
        if original_node.evaluated_value == VISIBLE_DEVICES:
            self.report(original_node, "TP905")
        self._reported_string(original_node)
        return updated_node

    def _reported_string(self, node: cst.SimpleString) -> None:
        value = node.evaluated_value
        if not isinstance(value, str):
            return
        row = STRINGS.get(value)
        if row is not None and row.kind == "string" and row.advice:
            self.report(node, row.code, row.advice)
        elif row is not None:
            self.report(node, row.code)
        elif value.startswith(NCCL_PREFIXES) and len(value) > len("NCCL_"):
            self.report(node, "TP912", NCCL_ADVICE)
        elif LEGACY_TYPE.fullmatch(value) and node not in self.type_arguments:
            self.report(node, "TP913", LEGACY_TYPE_ADVICE)

    # -- the one rewrite ------------------------------------------------------------
    def leave_Call(self, original_node, updated_node):
        """``with nvtx.range(name):``: kept for CUDA, ``record_function`` elsewhere;
        ``record_function`` everywhere is the unsafe fix."""
        if original_node not in self.ranges:
            return updated_node
        profiler = updated_node.with_changes(
            func=self.expr("{torch}.profiler.record_function")
        )
        if self.context.options.unsafe_fixes:
            if self.record_and_decide(original_node, "TP902", RANGE_UNSAFE, Fix.UNSAFE):
                return profiler
            return updated_node
        if not self.record_and_decide(original_node, "TP902"):
            return updated_node
        return self.expr(
            "{call} if " + CUDA_TEST + " else {profiler}",
            call=updated_node,
            profiler=profiler.deep_clone(),
        )
