"""TP313: the legacy ``torch.cuda.*Tensor`` types.

A legacy CUDA type names a dtype on the CUDA device, so each use becomes that dtype
on the module's device binding:
- a constructor, ``torch.cuda.FloatTensor([1, 2])`` / ``(2, 3)``, becomes
  ``torch.tensor(..., dtype=..., device=_DEVICE())`` / ``torch.empty(...)``;
- a conversion, ``x.type(torch.cuda.FloatTensor)`` or ``x.type("torch.cuda.
  FloatTensor")``, becomes ``x.to(_DEVICE(), torch.float32)``;
- a type test, ``isinstance(x, torch.cuda.FloatTensor)``, becomes a test of the
  tensor's dtype and device.
``torch.set_default_tensor_type(torch.cuda.HalfTensor)`` as a statement is kept for
CUDA behind ``if _DEVICE().type == "cuda":``, with ``torch.set_default_dtype`` and
``torch.set_default_device(_DEVICE())`` in its ``else``: the portable pair alone is not
exact on CUDA, where the legacy ``torch.Tensor(...)`` constructor ignores the default
device (checked on torch 2.13), but it is on the CPU, where that constructor makes
CPU tensors of the default dtype.
"""

from __future__ import annotations

import re
from typing import Dict, Optional, Set

import libcst as cst

from codemod import catalog
from codemod.passes.base import Pass, attribute_name, walk
from codemod.passes.guards import and_operands, is_cuda_test
from codemod.rules.tensor_types import RULES

TENSOR_TYPES = catalog.TENSOR_TYPES
# "torch.cuda.FloatTensor" written as a string, as `.type()` accepts it.
_TYPE_STRING = re.compile(r"torch\.cuda\.(?P<name>\w+)Tensor")
# Receivers that are probably an nn.Module, whose .type() casts every buffer.
_MODULE_NAME = re.compile(r"(^|_)(model|module|net|network|self|layer|encoder)s?$")
# Only a floating type can be the default (any other raises on CUDA too).
DEFAULT_DTYPES = {"float32", "float64", "float16", "bfloat16"}
DEFAULT_TYPE = (
    "`torch.set_default_tensor_type` with a CUDA type, not as a statement of its "
    'own: keep it for CUDA behind `if _DEVICE().type == "cuda":`, with '
    "`torch.set_default_dtype(...)` and `torch.set_default_device(_DEVICE())` "
    "elsewhere"
)
NOT_A_DEFAULT = (
    "`torch.set_default_tensor_type` with a CUDA type that is not floating: it "
    "raises on CUDA too (only floating types can be the default)"
)
# The else branch of a kept default type: the same dtype on the device binding.
DEFAULT_ELSEWHERE = (
    "{torch}.set_default_dtype({torch}.{dtype})",
    "{torch}.set_default_device({device})",
)
MODULE_TYPE = (
    "`.type()` of what may be an nn.Module: `Module.type()` casts integer buffers "
    "too; for a tensor use `x.to(_DEVICE(), dtype)`, for a module `.to(_DEVICE())` and "
    "`.to(dtype)` (floating parameters only)"
)


def _is_module_name(node: cst.BaseExpression) -> bool:
    name = node.attr if isinstance(node, cst.Attribute) else node
    return isinstance(name, cst.Name) and bool(_MODULE_NAME.search(name.value))


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


class TensorTypes(Pass):
    RULES = RULES
    TRIGGER = catalog.trigger_of("tensor_types")

    def __init__(self, context) -> None:
        super().__init__(context)
        self.handled: Set[cst.CSTNode] = set()  # type names their parent rewrites
        self.callees: Set[cst.CSTNode] = set()
        self.statements: Set[cst.CSTNode] = set()  # calls that are a line of their own
        self.on_cuda: Set[cst.CSTNode] = set()  # behind `_DEVICE().type == "cuda"`
        self.defaults: Dict[cst.CSTNode, str] = {}  # set_default_tensor_type -> dtype
        # Type tests an assertion checks: the tensor is where the program computes
        # (the CPU too), as `assert x.is_cuda` becomes.
        self.asserted: Set[cst.CSTNode] = set()

    def visit_Assert(self, node: cst.Assert) -> None:
        self.asserted.update(and_operands(node.test))

    def visit_If(self, node: cst.If) -> None:
        if is_cuda_test(node.test, self.context.device_name):
            self.on_cuda.update(walk(node.body))

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if len(node.body) == 1 and isinstance(node.body[0], cst.Expr):
            self.statements.add(node.body[0].value)

    def _dtype(self, node: cst.CSTNode) -> Optional[str]:
        """``float32`` for ``torch.cuda.FloatTensor`` or "torch.cuda.FloatTensor"."""
        if isinstance(node, cst.SimpleString):
            match = _TYPE_STRING.fullmatch(str(node.evaluated_value))
            return TENSOR_TYPES.get(match.group("name")) if match else None
        name = self.qualified_name(node) or ""
        if name.startswith("torch.cuda.") and name.endswith("Tensor"):
            return TENSOR_TYPES.get(name[len("torch.cuda.") : -len("Tensor")])
        return None

    # -- classification, top-down ---------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        # Seen before its callee is: `_is_called` knows it when the callee is left.
        self.callees.add(node.func)
        args = node.args
        if not args or args[0].keyword is not None or args[0].star:
            return
        first = args[0].value
        if attribute_name(node) == "type" and self._dtype(first):
            self.handled.add(first)
        elif self.callee(node) in ("isinstance", "builtins.isinstance") or (
            isinstance(node.func, cst.Name) and node.func.value == "isinstance"
        ):
            if len(args) == 2 and self._dtype(args[1].value):
                self.handled.add(args[1].value)
        elif self.callee(node) == "torch.set_default_tensor_type" and self._dtype(
            first
        ):
            self._default_type(node, first)

    def _default_type(self, node: cst.Call, first: cst.BaseExpression) -> None:
        self.handled.add(first)
        dtype = self._dtype(first)
        if node in self.on_cuda:
            return  # kept for CUDA, by a first run or by hand
        if dtype not in DEFAULT_DTYPES:
            self.report(node, "TP313", NOT_A_DEFAULT)
        elif node not in self.statements or len(node.args) != 1:
            self.report(node, "TP313", DEFAULT_TYPE)
        else:
            self.defaults[node] = dtype  # type: ignore[assignment]

    def visit_Attribute(self, node: cst.Attribute) -> Optional[bool]:
        self._reference(node)
        return None

    def visit_Name(self, node: cst.Name) -> None:
        self._reference(node)

    def _reference(self, node: cst.CSTNode) -> None:
        """A legacy type used other than by calling it or converting to it."""
        if node in self.handled or not self._dtype(node):
            return
        self.handled.add(node)
        short = self.qualified_name(node)[len("torch.") :]  # type: ignore[index]
        if not self._is_called(node):
            self.report(
                node,
                "TP313",
                f"`torch.{short}` used as a value: only calls are " "rewritten",
            )

    def _is_called(self, node: cst.CSTNode) -> bool:
        return node in self.callees

    # -- rewriting, bottom-up -------------------------------------------------
    def leave_SimpleStatementLine(self, original_node, updated_node):
        """``set_default_tensor_type(<CUDA type>)``: kept for CUDA, the same dtype
        on the device binding elsewhere."""
        line = original_node.body
        call = (
            line[0].value if len(line) == 1 and isinstance(line[0], cst.Expr) else None
        )
        dtype = self.defaults.get(call)  # type: ignore[arg-type]
        if call is None or dtype is None or not self.record_and_decide(call, "TP313"):
            return updated_node
        elsewhere = [
            cst.SimpleStatementLine([cst.Expr(self.expr(t.replace("{dtype}", dtype)))])
            for t in DEFAULT_ELSEWHERE
        ]
        return cst.If(
            test=self.expr('{device}.type == "cuda"'),
            body=cst.IndentedBlock([updated_node.with_changes(leading_lines=[])]),
            orelse=cst.Else(cst.IndentedBlock(elsewhere)),
            leading_lines=updated_node.leading_lines,
        )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        if isinstance(original_node.func, (cst.Attribute, cst.Name)) and self._dtype(
            original_node.func
        ):
            return self._constructor(original_node, updated_node)
        args = original_node.args
        if (
            attribute_name(original_node) == "type"
            and args
            and args[0].value in (self.handled)
        ):
            return self._conversion(original_node, updated_node)
        if (
            len(args) == 2
            and args[1].value in self.handled
            and self._dtype(args[1].value)
            and attribute_name(original_node) is None
        ):
            return self._type_test(original_node, updated_node)
        return updated_node

    def _constructor(self, original: cst.Call, updated: cst.Call):
        short = self.qualified_name(original.func)[len("torch.") :]  # type: ignore
        form = _tensor_form(original)
        if form is None:
            self.report(
                original,
                "TP313",
                f"`torch.{short}(...)`: tell data from sizes, then use "
                "`torch.tensor(data, ...)` or `torch.empty(*sizes, ...)` with "
                "`device=_DEVICE()`",
            )
            return updated
        if not self.record_and_decide(original, "TP313"):
            return updated
        dtype = self._dtype(original.func)
        keywords = f"dtype={{torch}}.{dtype}, device={{device}}"
        if form == "data":
            return self.expr(
                "{torch}.tensor({data}, " + keywords + ")", data=updated.args[0].value
            )
        sizes = [a.value.value for a in updated.args]  # type: ignore[attr-defined]
        shape = ", ".join(sizes) or "0"
        return self.expr("{torch}.empty(" + shape + ", " + keywords + ")")

    def _conversion(self, original: cst.Call, updated: cst.Call):
        """``x.type(torch.cuda.FloatTensor)`` -> ``x.to(_DEVICE(), torch.float32)``."""
        receiver = original.func.value  # type: ignore[attr-defined]
        if _is_module_name(receiver):
            self.report(original, "TP313", MODULE_TYPE)
            return updated
        if not self.record_and_decide(original, "TP313"):
            return updated
        dtype = self._dtype(original.args[0].value)
        head = self.expr("{device}, {torch}." + dtype)  # a tuple: two arguments
        args = [cst.Arg(e.value) for e in head.elements] + list(updated.args[1:])  # type: ignore
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        args = [
            a.with_changes(
                comma=comma if i < len(args) - 1 else cst.MaybeSentinel.DEFAULT
            )
            for i, a in enumerate(args)
        ]
        return updated.with_changes(
            func=updated.func.with_changes(attr=cst.Name("to")), args=args
        )

    def _type_test(self, original: cst.Call, updated: cst.Call):
        """``isinstance(x, torch.cuda.FloatTensor)`` -> a dtype-and-device test."""
        subject = original.args[0].value
        if not isinstance(subject, (cst.Name, cst.Attribute)):
            self.report(
                original,
                "TP313",
                "`isinstance` of an expression: test "
                "`x.dtype` and `x.device.type` of a name instead",
            )
            return updated
        if not self.record_and_decide(original, "TP313"):
            return updated
        dtype = self._dtype(original.args[1].value)
        x = updated.args[0].value
        where = "" if original in self.asserted else ' != "cpu"'
        test = self.expr(
            "(isinstance({x}, {torch}.Tensor) and {y}.dtype == {torch}."
            + dtype
            + " and {z}.device.type == {device}.type"
            + where
            + ")",
            x=x,
            y=x.deep_clone(),
            z=x.deep_clone(),
        )
        return (
            test.with_changes(lpar=[], rpar=[])
            if original in self.context.bare
            else test
        )
