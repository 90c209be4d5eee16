"""The guard the runtime pass emits around a call that raises (or means nothing)
without an accelerator: ``(call if _DEVICE().type != "cpu" else cpu)`` inline, or
``if _DEVICE().type != "cpu":`` over the call when it is a statement of its own;
consecutive such ``if`` blocks merged, and a guarded figure divided by a constant
(memory in MiB) hoisted under the guard."""

from __future__ import annotations

import ast
import operator
from typing import Dict, List, Optional, Sequence, Set, Union

import libcst as cst

CPU = '{device}.type != "cpu"'  # the guard; its quotes are adapted inside f-strings

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


def guard_test(quote: str = '"') -> str:
    """The guard's test as a template, written with ``quote``."""
    return CPU.replace('"', quote)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


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


class CpuGuard:
    """The guards one run of the pass emits (``runtime``: the pass, for its
    context, templates and whether it is inside a branch that needs an
    accelerator)."""

    def __init__(self, runtime) -> None:
        self.runtime = runtime
        self.quotes: List[str] = []  # enclosing f-string quotes
        # guard IfExp -> call: its value is unused if it is a statement
        self.statements: Dict[cst.CSTNode, cst.BaseExpression] = {}
        self.made: Set[cst.CSTNode] = set()  # the `if` statements emitted for guards

    def expression(self, original, call, cpu: str) -> cst.BaseExpression:
        """``(call if _DEVICE().type != "cpu" else cpu)``, parenthesized only if needed;
        the call alone inside a branch that runs only with an accelerator."""
        runtime = self.runtime
        if runtime.in_accelerated_branch():
            return call
        quote = "'" if self.quotes and '"' in self.quotes[-1] else '"'
        node = runtime.expr(
            "({call} if " + guard_test(quote) + " else " + cpu + ")", call=call
        )
        if original in runtime.context.bare:
            node = node.with_changes(lpar=[], rpar=[])
        self.statements[node] = call
        return node

    def cuda_only(self, original, call, other: str) -> cst.BaseExpression:
        """``(call if _DEVICE().type == "cuda" else other)``: the call kept for CUDA."""
        runtime = self.runtime
        quote = "'" if self.quotes and '"' in self.quotes[-1] else '"'
        node = runtime.expr(
            "({call} if {device}.type == "
            + quote
            + "cuda"
            + quote
            + " else "
            + other
            + ")",
            call=call,
        )
        if original in runtime.context.bare:
            node = node.with_changes(lpar=[], rpar=[])
        return node

    def unwrap(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """The call of a guard made here (``node``), for use under another guard."""
        return self.statements.get(node, node)

    def unwrap_within(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """``node`` with every guard made here inside it reduced to its call, for
        use under another guard."""
        statements = self.statements

        class Unwrap(cst.CSTTransformer):
            def on_leave(self, original_node, updated_node):
                return statements.get(original_node, updated_node)

        return node.visit(Unwrap())  # type: ignore[return-value]

    def hoist(self, original_node, updated_node):
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
        elif original_node in self.runtime.context.bare:
            hoisted = hoisted.with_changes(lpar=[], rpar=[])
        self.statements[hoisted] = self.statements[left]
        return hoisted

    # -- guarded statements ----------------------------------------------------
    def _guarded_statement(self, statement: cst.BaseSmallStatement):
        """The call of ``call if _DEVICE().type != "cpu" else ...`` as a statement."""
        if isinstance(statement, cst.Expr):
            return self.statements.get(statement.value)
        return None

    def _if(self, call: cst.BaseExpression, comment=None, **changes) -> cst.If:
        """``if _DEVICE().type != "cpu":`` over ``call`` (and its line's comment)."""
        line = cst.SimpleStatementLine([cst.Expr(call)])
        if comment is not None:
            line = line.with_changes(trailing_whitespace=comment)
        node = cst.If(
            test=self.runtime.expr(guard_test()),
            body=cst.IndentedBlock([line]),
            **changes,
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

    def split_line(self, line: cst.SimpleStatementLine):
        """``line``, or the statements it becomes (an ``if`` per guarded call)."""
        out = self._split(line)
        if len(out) == 1:
            return out[0]
        return cst.FlattenSentinel(out)

    def split_suite(self, suite: cst.SimpleStatementSuite):
        """``if x: call`` on one line: the guarded call gets a block of its own."""
        line = cst.SimpleStatementLine(body=suite.body)
        out = self._split(line)
        if out == [line]:
            return suite
        return cst.IndentedBlock(
            body=self._merged(out), header=suite.trailing_whitespace
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

    def merge(self, block):
        """``block`` (a module or an indented block) with its guard ``if``s merged."""
        if not any(s in self.made for s in block.body):
            return block
        return block.with_changes(body=self._merged(block.body))
