"""The device type torchport gives an AMP call, and that form recognised again.

``torch.autocast``, ``GradScaler`` and the autocast state are given the accelerator's
type, and without an accelerator CUDA's, as the original was (the catalogue's
``AMP_DEVICE_TYPE``): on a CPU host CUDA's autocast disables itself and the model
computes in float32 as before, where the CPU's would compute in bfloat16. A decorator
is evaluated at import, where the device is not asked for: it gets the accelerator of
the build (``BUILT_AMP_DEVICE_TYPE``).

The ``"cuda"`` of either form is CUDA's on purpose: the device-strings pass, run
again, leaves it as it is (``cuda_fallback``).
"""

from __future__ import annotations

from typing import Optional, Set

import libcst as cst

from codemod.catalog.amp import (
    AMP_DEVICE_ARGUMENTS,
    AMP_DEVICE_TYPE,
    BUILT_AMP_DEVICE_TYPE,
    BUILT_TYPE_TORCH,
)
from codemod.passes.device_positions import Kind

_CODE = cst.Module([])


def device_type_template(at_import: bool, target_torch, accelerated: bool) -> str:
    """The template of an AMP call's device type (``at_import``: a decorator's;
    ``accelerated``: in code that runs only where there is an accelerator)."""
    if at_import and target_torch >= BUILT_TYPE_TORCH:
        return BUILT_AMP_DEVICE_TYPE
    return "{device}.type" if accelerated else AMP_DEVICE_TYPE


def _is_cuda(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.SimpleString) and node.evaluated_value == "cuda"


def _dotted(node: cst.CSTNode) -> str:
    return _CODE.code_for_node(node)


def cuda_fallback(node: cst.CSTNode) -> Optional[cst.SimpleString]:
    """The ``"cuda"`` of ``X.type if X.type != "cpu" else "cuda"`` or of
    ``(torch.accelerator.current_accelerator() or torch.device("cuda")).type``'s
    operand; None for anything else."""
    if isinstance(node, cst.IfExp):
        test = node.test
        if not (
            _is_cuda(node.orelse)
            and isinstance(node.body, cst.Attribute)
            and node.body.attr.value == "type"
            and isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.NotEqual)
        ):
            return None
        cpu = test.comparisons[0].comparator
        if not (isinstance(cpu, cst.SimpleString) and cpu.evaluated_value == "cpu"):
            return None
        if _dotted(test.left) != _dotted(node.body):
            return None
        return node.orelse  # type: ignore[return-value]
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
        left, right = node.left, node.right
        if not (
            isinstance(left, cst.Call)
            and _dotted(left.func).endswith("accelerator.current_accelerator")
            and not left.args
            and isinstance(right, cst.Call)
            and _dotted(right.func).endswith(".device")
            and len(right.args) == 1
            and right.args[0].keyword is None
            and _is_cuda(right.args[0].value)
        ):
            return None
        return right.args[0].value  # type: ignore[return-value]
    return None


class AmpDeviceTypes:
    """Mixin for the device-strings pass: a ``"cuda"`` literal given to a generic AMP
    callable (``Kind.AMP``) becomes the AMP device type, a decorator's the one read
    at import time; the fallback literal of a form torchport wrote stays as it is."""

    def __init__(self, context) -> None:
        super().__init__(context)  # type: ignore[call-arg]
        self.decorator_calls: Set[cst.CSTNode] = set()  # run at import time
        self.at_import: Set[cst.CSTNode] = set()  # device types given to decorators

    def visit_Decorator(self, node: cst.Decorator) -> None:
        self.decorator_calls.add(node.decorator)

    def visit_Parameters(self, node: cst.Parameters) -> None:
        """A default read only as an AMP device type (codemod.passes.device_values),
        evaluated where the function is defined: at import, for most."""
        values = self.context.device_values  # type: ignore[attr-defined]
        for param in (*node.posonly_params, *node.params, *node.kwonly_params):
            default = param.default
            if default is not None and values:
                if values.get(self.position(default)) is Kind.AMP:  # type: ignore
                    self.mark(default, Kind.AMP, "TP105")  # type: ignore
                    self.at_import.add(default)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        self.keep_fallback(node)

    def keep_fallback(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is a form torchport wrote (its "cuda" is then kept)."""
        fallback = cuda_fallback(node)
        if fallback is not None:
            self.kinds[fallback] = (Kind.IGNORE, "")  # type: ignore[attr-defined]
        return fallback is not None

    def note_amp_call(self, node: cst.Call, callee: Optional[str], code: str) -> None:
        """Mark the device type given by keyword to a generic AMP callable (before
        the device keywords are: the first mark stands)."""
        if callee not in AMP_DEVICE_ARGUMENTS:
            return
        keyword = AMP_DEVICE_ARGUMENTS[callee][1]
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == keyword:
                self.mark(arg.value, Kind.AMP, code)  # type: ignore[attr-defined]
        if node in self.decorator_calls:
            self.at_import.update(a.value for a in node.args)

    def _amp_template(self, original: cst.CSTNode) -> str:
        at_import = original in self.at_import
        target = self.context.options.target_torch  # type: ignore[attr-defined]
        accelerated = self.in_accelerated_branch()  # type: ignore[attr-defined]
        return device_type_template(at_import, target, accelerated)

    def decide_literal(self, original: cst.CSTNode, code: str, kind) -> bool:
        """``record_and_decide`` for a device literal of ``kind``: the AMP device
        type a decorator gets (the build's accelerator) reads no device."""
        amp = kind is Kind.AMP
        reads = "{device}" in self._amp_template(original) if amp else None
        return self.record_and_decide(  # type: ignore[attr-defined]
            original, code, reads_device=reads
        )

    def amp_device_type(self, original: cst.CSTNode) -> cst.BaseExpression:
        return self.expr(self._amp_template(original))  # type: ignore
