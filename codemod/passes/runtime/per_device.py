"""``torch.cuda.get_rng_state_all()`` and ``set_rng_state_all(states)`` written as what
they do, device by device, with the per-device functions a backend's module has
(``get_rng_state``, ``set_rng_state``: ``torch.random.fork_rng`` and
``torch.utils.checkpoint`` need them of every backend) over
``torch.accelerator.device_count()`` devices (TP311).

``get_rng_state_all()`` becomes a list comprehension, empty without an accelerator;
``set_rng_state_all(states)``, a statement of its own, a ``for`` loop behind the CPU
guard. The loop's names are ones the module does not use (a ``for`` binds them in the
enclosing scope).
"""

from __future__ import annotations

from typing import Dict, Set

import libcst as cst

from codemod.passes.runtime.cpu_guard import guard_test

GET_ALL = (
    "[{torch}.get_device_module({device}).get_rng_state({index}) "
    "for {index} in range({torch}.accelerator.device_count())]"
)
SET_ONE = "{torch}.get_device_module({device}).set_rng_state({state}, {index})"
NOT_A_STATEMENT = (
    "`torch.cuda.set_rng_state_all(...)` is rewritten as a statement on a line of its "
    "own only (it becomes a loop over the devices)"
)


def free_name(base: str, taken: Set[str]) -> str:
    """``base``, or ``base2``, ``base3``... : the first the module does not use."""
    name, number = base, 1
    while name in taken:
        number += 1
        name = f"{base}{number}"
    return name


def get_all(runtime) -> cst.BaseExpression:
    index = free_name("index", runtime.context.facts.identifiers)
    return runtime.expr(GET_ALL.replace("{index}", index))


def set_all_loop(
    runtime, states: cst.BaseExpression, guarded: bool
) -> cst.BaseStatement:
    """``for index, state in enumerate(states): <set_rng_state(state, index)>``, inside
    ``if _DEVICE().type != "cpu":`` when ``guarded``."""
    taken = runtime.context.facts.identifiers
    index, state = free_name("device_index", taken), free_name("rng_state", taken)
    call = runtime.expr(SET_ONE.replace("{index}", index).replace("{state}", state))
    loop = cst.For(
        target=cst.Tuple(
            [cst.Element(cst.Name(index)), cst.Element(cst.Name(state))],
            lpar=[],
            rpar=[],
        ),
        iter=cst.Call(cst.Name("enumerate"), [cst.Arg(states)]),
        body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Expr(call)])]),
    )
    if not guarded:
        return loop
    return cst.If(test=runtime.expr(guard_test()), body=cst.IndentedBlock([loop]))


class Loops:
    """The statement lines a call becomes a compound statement of (original call ->
    statement), put in place of its line by the pass."""

    def __init__(self) -> None:
        self.statements: Dict[cst.Call, cst.BaseStatement] = {}
        self.alone: Set[cst.Call] = set()  # calls that are their line's only statement

    def note_line(self, line: cst.SimpleStatementLine) -> None:
        if len(line.body) == 1 and isinstance(line.body[0], cst.Expr):
            value = line.body[0].value
            if isinstance(value, cst.Call):
                self.alone.add(value)

    def replace(self, original: cst.SimpleStatementLine):
        """The statement the line becomes, or None; its comments go with it."""
        expr = original.body[0]
        statement = self.statements.get(getattr(expr, "value", None))  # type: ignore
        if statement is None:
            return None
        innermost = statement
        while not isinstance(innermost.body.body[0], cst.SimpleStatementLine):
            innermost = innermost.body.body[0]
        line = innermost.body.body[0].with_changes(
            trailing_whitespace=original.trailing_whitespace
        )
        return _with_innermost(statement, line).with_changes(
            leading_lines=original.leading_lines
        )


def _with_innermost(statement, line):
    inner = statement.body.body[0]
    if isinstance(inner, cst.SimpleStatementLine):
        return statement.with_changes(body=statement.body.with_changes(body=[line]))
    replaced = _with_innermost(inner, line)
    return statement.with_changes(body=statement.body.with_changes(body=[replaced]))
