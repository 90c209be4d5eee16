"""Positions where an expression needs no parentheses of its own.

A pass that replaces a call by a conditional expression (``call if guard else
value``) parenthesizes it, except where the grammar takes any expression as it is:
a call argument, the value of an assignment, a return, a statement of its own, a
list or dict element, an f-string field, an ``if`` or ``assert`` test. The positions
are found once per chunk, for every pass, by the traversal.
"""

from __future__ import annotations

from typing import Set

import libcst as cst


class BarePositions(cst.CSTTransformer):
    """Collects, as the traversal goes down, the expressions in a bare position.

    It runs first at every node, so a pass sees a node's position before it visits
    or leaves the node.
    """

    def __init__(self, found: Set[cst.CSTNode]) -> None:
        super().__init__()
        self.found = found

    def visit_Arg(self, node: cst.Arg) -> None:
        if not node.star:
            self.found.add(node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        self.found.add(node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self.found.add(node.value)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self.found.add(node.value)

    def visit_Expr(self, node: cst.Expr) -> None:
        self.found.add(node.value)

    def visit_Element(self, node: cst.Element) -> None:
        self.found.add(node.value)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        self.found.add(node.value)

    def visit_FormattedStringExpression(self, node) -> None:
        self.found.add(node.expression)

    def visit_If(self, node: cst.If) -> None:
        self.found.add(node.test)

    def visit_Assert(self, node: cst.Assert) -> None:
        self.found.add(node.test)
