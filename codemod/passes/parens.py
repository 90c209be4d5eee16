"""Positions where an expression needs no parentheses of its own.

A pass that replaces a call by a conditional expression (``call if guard else
value``) parenthesizes it, except where the grammar takes any expression as it is:
a call argument, the value of an assignment, a return, a statement of its own, a
list or dict element, an f-string field, an ``if`` or ``assert`` test. The
traversal records these positions once per chunk, for every pass
(``FileContext.bare``), before the passes visit a node's children.
"""

from __future__ import annotations

from typing import Callable, Dict, Optional

import libcst as cst


def _value(node) -> Optional[cst.CSTNode]:
    return node.value


def _test(node) -> Optional[cst.CSTNode]:
    return node.test


def _argument(node: cst.Arg) -> Optional[cst.CSTNode]:
    return None if node.star else node.value


def _field(node: cst.FormattedStringExpression) -> Optional[cst.CSTNode]:
    return node.expression


# Node type name -> the child of it that sits in a bare position (None: none here).
BARE_CHILD: Dict[str, Callable[[cst.CSTNode], Optional[cst.CSTNode]]] = {
    "Arg": _argument,
    "Assign": _value,
    "AnnAssign": _value,
    "Return": _value,
    "Expr": _value,
    "Element": _value,
    "DictElement": _value,
    "FormattedStringExpression": _field,
    "If": _test,
    "Assert": _test,
}
