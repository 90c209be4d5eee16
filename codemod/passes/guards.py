"""Tests that decide where code runs: availability checks, early exits, fallbacks, and
the guard torchport emits.

An early exit guards the rest of its block: after ``if not torch.cuda.is_available():
return`` (or ``continue``, ``break``, ``raise``, ``sys.exit()``) and after ``assert
torch.cuda.is_available()``, the statements that follow run only with CUDA
(``exit_guards`` finds them in a block). One that stops the program there (an
``assert``, a ``raise``, ``sys.exit("needs a GPU")``: ``raising_exit``) is a hard
requirement of an accelerator.

A fallback check (``if args.device == "cuda" and not torch.cuda.is_available():
args.device = "cpu"``, or plainly ``if not torch.cuda.is_available(): args.device =
"cpu"``) takes the CPU when CUDA is missing for what the user asked for, which may
be "cuda"; ``fallback_checks`` finds it so that it is kept as written (a widened
check, or a "cuda" read as ``_DEVICE().type``, would no longer take it).

``_DEVICE().type != "cpu"`` is the guard torchport emits (``is_guard``, ``without_guards``)
and ``_DEVICE().type == "cuda"`` the test of code kept for CUDA (``is_cuda_test``);
``AcceleratedBranches`` tells a pass when what it visits runs only with an
accelerator, where that guard is already true.
"""

from __future__ import annotations

import ast
import re
from typing import Callable, Iterator, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from codemod.passes.names import dotted_name

AVAILABILITY = {"torch.cuda.is_available", "torch.accelerator.is_available"}
QualifiedName = Callable[[cst.CSTNode], Optional[str]]


def availability_calls(test: cst.BaseExpression, qualified_name: QualifiedName):
    """``is_available()`` calls that must be true for the body to run: the test
    itself or an operand of an ``and`` chain."""
    if isinstance(test, cst.Call) and qualified_name(test.func) in AVAILABILITY:
        return [test]
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return availability_calls(test.left, qualified_name) + availability_calls(
            test.right, qualified_name
        )
    return []


def _unavailability_calls(test: cst.BaseExpression, qualified_name: QualifiedName):
    """``is_available()`` calls that must be true for an exit on ``test`` not to be
    taken: ``not is_available()``, or an operand of an ``or`` chain of them."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return availability_calls(test.expression, qualified_name)
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return _unavailability_calls(test.left, qualified_name) + _unavailability_calls(
            test.right, qualified_name
        )
    return []


EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)
EXIT_CALLS = {"sys.exit", "exit", "quit", "os._exit"}


def _exits(body: cst.BaseSuite, qualified_name: QualifiedName) -> bool:
    """Whether a block always leaves: its last statement returns, raises, continues,
    breaks or exits the interpreter."""
    last = body.body[-1] if body.body else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1] if last.body else None
    if isinstance(last, EXITS):
        return True
    return (
        isinstance(last, cst.Expr)
        and isinstance(last.value, cst.Call)
        and (qualified_name(last.value.func) or dotted_name(last.value.func))
        in EXIT_CALLS
    )


def exit_guard_calls(
    node: cst.CSTNode, qualified_name: QualifiedName
) -> List[cst.Call]:
    """The availability calls of an early exit (``if not torch.cuda.is_available():
    return``, ``assert torch.cuda.is_available()``): what follows it in its block runs
    only when they are true. [] for any other statement."""
    if isinstance(node, cst.Assert):
        return availability_calls(node.test, qualified_name)
    if isinstance(node, cst.If) and node.orelse is None:
        if _exits(node.body, qualified_name):
            return _unavailability_calls(node.test, qualified_name)
    return []


def raising_exit(node: cst.CSTNode, qualified_name: QualifiedName) -> bool:
    """An early exit that stops the program where CUDA is missing: ``assert
    torch.cuda.is_available()``, ``raise`` of an error (not a test skip), or
    ``sys.exit()`` with a message or a non-zero status. Widened to any accelerator,
    it differs only where the original stopped (a ``return`` or a clean exit does
    not: the program went on without CUDA there)."""
    if isinstance(node, cst.Assert):
        return True
    if not isinstance(node, cst.If):
        return False
    last = node.body.body[-1] if node.body.body else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1] if last.body else None
    if isinstance(last, cst.Raise):
        raised = last.exc
        if isinstance(raised, cst.Call):
            raised = raised.func
        name = dotted_name(raised) if raised is not None else None
        return bool(name) and "skip" not in name.lower()  # type: ignore[union-attr]
    if not (isinstance(last, cst.Expr) and isinstance(last.value, cst.Call)):
        return False
    call = last.value
    if (qualified_name(call.func) or dotted_name(call.func)) not in EXIT_CALLS:
        return False
    if len(call.args) != 1 or call.args[0].keyword is not None:
        return False  # exit() is exit(None): status 0
    status = call.args[0].value
    if isinstance(status, cst.Integer):
        return status.evaluated_value != 0
    return isinstance(status, (cst.SimpleString, cst.ConcatenatedString))


def exit_guards(
    statements: Sequence[cst.CSTNode], qualified_name: QualifiedName
) -> Iterator[Tuple[int, cst.CSTNode]]:
    """(index in ``statements``, the ``If`` or ``Assert``) of each early exit of a
    block; the statements after the index are what it guards."""
    for index, statement in enumerate(statements):
        small = (
            statement.body
            if isinstance(statement, cst.SimpleStatementLine)
            else [statement]
        )
        for node in small:
            if exit_guard_calls(node, qualified_name):
                yield index, node


_CUDA_STRING = re.compile(r"cuda(?::\d+)?")


def and_operands(test: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The operands of an ``and`` chain (the test itself otherwise)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return and_operands(test.left) + and_operands(test.right)
    return [test]


def cuda_string(node: cst.SimpleString) -> bool:
    """``"cuda"`` or ``"cuda:N"``."""
    value = node.evaluated_value
    return isinstance(value, str) and _CUDA_STRING.fullmatch(value) is not None


def cuda_comparison(node: cst.BaseExpression) -> bool:
    """``x == "cuda"``, ``x != "cuda:0"``, ``"cuda" in x``, ``x in ["cuda"]``: a
    choice tested for CUDA."""
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
        return False
    listed = node.comparisons[0].comparator
    if isinstance(listed, (cst.List, cst.Tuple, cst.Set)):
        values = [e.value for e in listed.elements]
        return (
            len(values) == 1
            and isinstance(values[0], cst.SimpleString)
            and (cuda_string(values[0]))
        )
    return any(
        isinstance(side, cst.SimpleString) and cuda_string(side)
        for side in (node.left, node.comparisons[0].comparator)
    )


def _missing_cuda(test: cst.BaseExpression, qualified_name: QualifiedName) -> bool:
    """``not torch.cuda.is_available()`` among the operands of an ``and`` chain."""
    return any(
        isinstance(operand, cst.UnaryOperation)
        and isinstance(operand.operator, cst.Not)
        and isinstance(operand.expression, cst.Call)
        and qualified_name(operand.expression.func) == "torch.cuda.is_available"
        for operand in and_operands(test)
    )


def _sets_cpu(node: Union[cst.If, cst.IfExp]) -> bool:
    """``if not torch.cuda.is_available(): args.device = "cpu"``: a body (no
    ``else``) that assigns the CPU to what the program was given, which may be an
    explicit "cuda" (widened, the check would keep it on another accelerator)."""
    if not isinstance(node, cst.If) or node.orelse is not None:
        return False
    for statement in getattr(node.body, "body", ()):
        for small in getattr(statement, "body", ()):
            if isinstance(small, cst.Assign) and _is_cpu(small.value):
                return True
    return False


def _is_cpu(value: cst.BaseExpression) -> bool:
    """``"cpu"`` or ``torch.device("cpu")``, as written."""
    if isinstance(value, cst.Call) and len(value.args) == 1:
        value = value.args[0].value
    return isinstance(value, cst.SimpleString) and value.evaluated_value == "cpu"


def fallback_checks(
    node: Union[cst.If, cst.IfExp], qualified_name: QualifiedName
) -> Tuple[List[cst.Comparison], List[Union[cst.If, cst.IfExp]]]:
    """(the comparisons with "cuda", the tests holding ``not is_available()``) of a
    fallback check: both in ``node``'s test (``args.device == "cuda" and not
    torch.cuda.is_available()``), or the comparison in ``node``'s test and the
    availability check in an ``if`` directly in its body; ([], [node]) for the plain
    ``if not torch.cuda.is_available(): <x> = "cpu"``; ([], []) otherwise."""
    comparisons = [o for o in and_operands(node.test) if cuda_comparison(o)]
    if not comparisons:
        plain = _missing_cuda(node.test, qualified_name) and _sets_cpu(node)
        return [], [node] if plain else []  # type: ignore[list-item]
    if _missing_cuda(node.test, qualified_name):
        return comparisons, [node]  # type: ignore[list-item]
    if not isinstance(node, cst.If) or not isinstance(node.body, cst.IndentedBlock):
        return [], []
    inner = [
        s
        for s in node.body.body
        if isinstance(s, cst.If) and _missing_cuda(s.test, qualified_name)
    ]
    return (comparisons, inner) if inner else ([], [])  # type: ignore[return-value]


def is_device_ref(node: cst.CSTNode, device_name: str) -> bool:
    """How emitted code reads the module's device: ``_DEVICE()`` (the accessor) or
    ``_DEVICE()`` (a device variable)."""
    if isinstance(node, cst.Call) and not node.args:
        node = node.func
    return isinstance(node, cst.Name) and node.value == device_name


def is_guard(test: cst.BaseExpression, device_name: str) -> bool:
    """``_DEVICE().type != "cpu"``, the guard torchport emits."""
    return (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.NotEqual)
        and is_binding_type(test.left, device_name)
        and isinstance(test.comparisons[0].comparator, cst.SimpleString)
        and test.comparisons[0].comparator.evaluated_value == "cpu"
    )


class _Unguard(cst.CSTTransformer):
    def __init__(self, device_name: str) -> None:
        super().__init__()
        self.device_name = device_name

    def leave_IfExp(self, original_node, updated_node):
        if is_guard(updated_node.test, self.device_name):
            return updated_node.body
        return updated_node


def without_guards(value: cst.BaseExpression, device_name: str) -> cst.BaseExpression:
    """``value`` with each ``X if _DEVICE().type != "cpu" else Y`` in it reduced to X:
    for an expression that is about to be put behind that same guard."""
    return value.visit(_Unguard(device_name))  # type: ignore[return-value]


def is_binding_type(node: cst.CSTNode, device_name: str) -> bool:
    """``_DEVICE().type`` of the module's device binding."""
    return (
        isinstance(node, cst.Attribute)
        and is_device_ref(node.value, device_name)
        and node.attr.value == "type"
    )


def is_cuda_test(test: cst.BaseExpression, device_name: str) -> bool:
    """``_DEVICE().type == "cuda"`` of the binding: what follows runs on CUDA only."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    return (
        isinstance(target.operator, cst.Equal)
        and is_binding_type(test.left, device_name)
        and isinstance(target.comparator, cst.SimpleString)
        and target.comparator.evaluated_value == "cuda"
    )


_CPU_STRING = re.compile("cpu")


def _is_module_flag(code: str, choices, device_name: str) -> bool:
    """Whether the test ``code`` is a flag of the module: it picks "cuda", or the
    device binding, in a choice anywhere (``ModuleFacts.flags``: also below the
    test, also once ported), compared as ``ast`` writes them."""
    picks = {"cuda", device_name, f"{device_name}()"}
    picks |= {f"{name}.type" for name in picks - {"cuda"}}
    flags = {test for test, picked in choices if picked in picks}
    if not flags:
        return False
    try:
        return ast.unparse(ast.parse(code.strip(), mode="eval").body) in flags
    except SyntaxError:  # a test spread over lines: parenthesized, it parses
        try:
            return ast.unparse(ast.parse(f"({code})", mode="eval").body) in flags
        except SyntaxError:
            return False


class AcceleratedBranches:
    """Mixin for a pass: ``in_accelerated_branch()`` says whether what is being
    visited runs only where there is an accelerator, so that ``_DEVICE().type !=
    "cpu"`` is already true there and no guard is needed.

    Such a branch is the body of ``if torch.cuda.is_available():`` (or of a
    ``case`` with such a test, ``case "cuda":`` about to become one) (or
    ``torch.accelerator``'s, also as an operand of an ``and``; with CUDA the device
    binding is an accelerator), of the guard torchport emits, of a test chained with
    it (``x == _DEVICE().type != "cpu"``), or of a flag that selects the "cuda" device
    (``"cuda" if args.cuda else "cpu"``, seen before: where it is set, the program
    runs on the accelerator).
    """

    def __init__(self, context) -> None:
        super().__init__(context)  # type: ignore[call-arg]
        self.accelerated: List[bool] = []
        self.flags: Set[str] = set()

    def in_accelerated_branch(self) -> bool:
        return any(self.accelerated)

    def visit_If_body(self, node: cst.If) -> None:
        self.accelerated.append(self.needs_accelerator(node.test))

    def leave_If_body(self, node: cst.If) -> None:
        self.accelerated.pop()

    def visit_IfExp_body(self, node: cst.IfExp) -> None:
        self.accelerated.append(self.needs_accelerator(node.test))

    def leave_IfExp_body(self, node: cst.IfExp) -> None:
        self.accelerated.pop()

    def visit_MatchCase_body(self, node: cst.MatchCase) -> None:
        accelerated = node in self.context.accelerator_tests  # type: ignore
        if node.guard is not None:
            accelerated = accelerated or self.needs_accelerator(node.guard)
        self.accelerated.append(accelerated)

    def leave_MatchCase_body(self, node: cst.MatchCase) -> None:
        self.accelerated.pop()

    def note_flag(self, node: cst.IfExp) -> None:
        """``"cuda" if flag else "cpu"``: ``flag`` selects the accelerator."""
        if self._device_literal(node.body, _CUDA_STRING) and self._device_literal(
            node.orelse, _CPU_STRING
        ):
            self.flags.add(cst.Module([]).code_for_node(node.test))

    def _device_literal(self, node: cst.BaseExpression, pattern) -> bool:
        """``"cuda"`` or ``torch.device("cuda")`` (for ``pattern``)."""
        if (
            isinstance(node, cst.Call)
            and self.qualified_name(node.func) == "torch.device"  # type: ignore
            and len(node.args) == 1
        ):
            node = node.args[0].value
        return isinstance(node, cst.SimpleString) and bool(
            pattern.fullmatch(str(node.evaluated_value))
        )

    def needs_accelerator(self, test: cst.BaseExpression) -> bool:
        device_name = self.context.device_name  # type: ignore[attr-defined]
        if isinstance(test, cst.BooleanOperation) and isinstance(
            test.operator, cst.And
        ):
            return self.needs_accelerator(test.left) or self.needs_accelerator(
                test.right
            )
        if isinstance(test, cst.Call):
            name = self.qualified_name(test.func)  # type: ignore[attr-defined]
            return name in AVAILABILITY and not test.args
        if test in self.context.accelerator_tests:  # type: ignore[attr-defined]
            return True  # `x == "cuda"`, about to become `x == _DEVICE().type != "cpu"`
        if is_cuda_test(test, device_name):
            return True
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 2:
            # `x == _DEVICE().type != "cpu"`: its last link is the guard.
            first, last = test.comparisons
            test = cst.Comparison(first.comparator, [last])
        code = cst.Module([]).code_for_node(test)
        return (
            code in self.flags
            or is_guard(test, device_name)
            or _is_module_flag(code, self.context.facts.flags, device_name)  # type: ignore
        )
