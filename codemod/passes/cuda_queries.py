"""TP315-TP317: ``torch.cuda`` queries that raise without CUDA, ported where the
port is exact on CUDA and differs only where the original raised.

- a query whose value only goes into text (``query_sites.message_fields``) becomes
  ``<query> if _DEVICE().type == "cuda" else _DEVICE().type`` (TP315);
- a comparison reading a compute capability becomes ``_DEVICE().type == "cuda" and
  <comparison>``: CUDA's answer on CUDA, False elsewhere (TP316);
- ``torch.cuda.is_bf16_supported()`` keeps CUDA's check on CUDA and asks the
  accelerator's autocast dtype elsewhere, False on the CPU as before (TP317, unsafe:
  on another accelerator it answered False without raising).

What runs only on CUDA is left to the other passes: the body of a CUDA-only guard
that stays, of ``_DEVICE().type == "cuda"`` and the operands after it in an ``and``.
A site decided here is claimed, so that its query's own rule (TP314, TP309, TP390,
TP903) does not report it again. The queries are ``codemod.catalog.queries``.
"""

from __future__ import annotations

from typing import Dict, List, Set, Union

import libcst as cst

from codemod import catalog
from codemod.catalog.queries import BF16, BF16_ELSEWHERE, MESSAGE_QUERIES
from codemod.model.rule import Fix
from codemod.passes.base import Pass, walk
from codemod.passes.cuda_only_code import guards_cuda_only_code
from codemod.passes.guards import and_operands, is_cuda_test
from codemod.passes.query_sites import (
    capability_read,
    printed_arguments,
    query_call,
    reads_capability,
)
from codemod.rules.runtime.queries import RULES

CUDA_KEPT = '{value} if {device}.type == "cuda" else '
TEXT = (
    "`torch.{name}(...)` only goes into text here: kept for CUDA, the device type "
    "elsewhere (where it raised)"
)
TEST = (
    "compute-capability test: CUDA's answer on CUDA, False elsewhere (where reading "
    "it raised)"
)


class CudaQueries(Pass):
    RULES = RULES
    TRIGGER = catalog.trigger_of("cuda_queries")

    def __init__(self, context) -> None:
        super().__init__(context)
        self.fixes: Dict[cst.CSTNode, str] = {}  # original node -> its rule, to fix
        self.quotes: List[str] = []  # enclosing f-strings' quotes
        self.left_alone: Set[cst.CSTNode] = set()  # runs on CUDA only
        self.in_spec: Set[cst.CSTNode] = set()  # fields of a format spec
        self.and_operands: Set[cst.CSTNode] = set()  # left of `and`: no parentheses

    # -- what runs on CUDA only -------------------------------------------------
    def visit_If(self, node: cst.If) -> None:
        self._kept(node)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        if is_cuda_test(node.test, self.context.device_name):  # ported already
            self._leave_alone(node.body, claim=True)
        self._kept(node)

    def _kept(self, node: Union[cst.If, cst.IfExp]) -> None:
        kept = self.context.kept_for_cuda
        if (
            is_cuda_test(node.test, self.context.device_name)
            or any(o in kept for o in and_operands(node.test))
            or guards_cuda_only_code(node, self.qualified_name)
        ):
            self._leave_alone(node.body)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        if not isinstance(node.operator, cst.And):
            return
        self.and_operands.add(node.left)  # `(a and b) and c` is `a and b and c`
        operands = and_operands(node)
        tests = [is_cuda_test(o, self.context.device_name) for o in operands]
        if True in tests:  # what follows `_DEVICE().type == "cuda" and`
            for operand in operands[tests.index(True) + 1 :]:
                self._leave_alone(operand, claim=True)

    def _leave_alone(self, node: cst.CSTNode, claim: bool = False) -> None:
        nodes = list(walk(node))
        self.left_alone.update(nodes)
        if claim:  # written so by a first run: no other pass reports it again
            for part in nodes:
                call = query_call(part, self.qualified_name)
                read = capability_read(part, self.qualified_name)
                if call is not None:
                    self._claim(part, call)
                elif read is not None:
                    self._claim_read(read)
                elif isinstance(part, cst.Call) and self.callee(part) == BF16:
                    self._claim(part, part)

    # -- the sites, top-down ----------------------------------------------------
    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self.quotes.append(node.quote)

    def leave_FormattedString(self, original_node, updated_node):
        self.quotes.pop()
        return updated_node

    def visit_FormattedStringExpression(self, node) -> None:
        if node in self.in_spec:
            return
        if node.format_spec:
            self.in_spec.update(n for part in node.format_spec for n in walk(part))
        elif node.equal is None and len(self.quotes) == 1:
            self._message_field(node.expression)

    def visit_Call(self, node: cst.Call) -> None:
        for value in printed_arguments(node, self.qualified_name):
            self._message_field(value)
        if node not in self.left_alone and self.callee(node) == BF16:
            self._decide(node, node, "TP317", "", Fix.UNSAFE)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if node in self.left_alone or node in self.fixes:
            return
        if reads_capability(node, self.qualified_name):
            if self._decide(node, None, "TP316", TEST):
                sides = [node.left, *(c.comparator for c in node.comparisons)]
                for side in sides:
                    read = capability_read(side, self.qualified_name)
                    if read is not None:
                        self._claim_read(read)

    def _message_field(self, value: cst.BaseExpression) -> None:
        call = query_call(value, self.qualified_name)
        if call is None or value in self.left_alone or value in self.fixes:
            return
        name = self.callee(call)[len("torch.") :]  # type: ignore[index]
        self._decide(value, call, "TP315", TEXT.format(name=name))

    def _decide(self, node, call, code: str, message: str, fix=None) -> bool:
        """Record the site; claim it once it is shown or fixed. True if shown."""
        shown = len(self.context.diagnostics)
        if self.record_and_decide(node, code, message, fix):
            self.fixes[node] = code
        elif len(self.context.diagnostics) == shown:
            return False  # not shown (suppressed, not selected): its own rule's
        if call is not None:
            self._claim(node, call)
        else:
            self.context.claimed.add(node)
        return True

    def _claim(self, node: cst.CSTNode, call: cst.Call) -> None:
        """The chain ``node`` down to its query ``call``, the callee's names too."""
        claimed = self.context.claimed
        while node is not call:
            claimed.add(node)
            node = node.value  # type: ignore[attr-defined]
        claimed.add(call)
        claimed.update(walk(call.func))

    def _claim_read(self, read: cst.CSTNode) -> None:
        call = read
        while not isinstance(call, cst.Call):
            call = call.value  # type: ignore[attr-defined]
        self._claim(read, call)

    # -- the fixes, bottom-up ---------------------------------------------------
    def _fix(self, original, updated):
        code = self.fixes.get(original)
        if code is None:
            return updated
        if code == "TP315":
            other = MESSAGE_QUERIES[self.callee(query_call(original, self.qualified_name))]  # type: ignore
            return self._expr(CUDA_KEPT + other, updated, bare=True)
        if code == "TP316":
            bare = original in self.context.bare or original in self.and_operands
            return self._expr('{device}.type == "cuda" and {value}', updated, bare)
        bare = original in self.context.bare
        return self._expr(CUDA_KEPT + BF16_ELSEWHERE, updated, bare)

    def _expr(self, template: str, value, bare: bool) -> cst.BaseExpression:
        if self.quotes and '"' in self.quotes[-1]:  # inside an f-string
            template = template.replace('"', "'")
        node = self.expr(template, value=value.with_changes(lpar=[], rpar=[]))
        if not bare:
            node = node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return node

    leave_Call = leave_Attribute = leave_Subscript = leave_Comparison = _fix
