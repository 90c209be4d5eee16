"""Seeds of torch.cuda that say again what ``torch.manual_seed`` said (TP310), and
``torch.cuda.manual_seed_all(x)`` written as what every backend has.

``torch.manual_seed(x)`` seeds every device's generators as ``manual_seed_all(x)``
does (CUDA's lazily, as it did), and the CPU's too; the CPU's state is saved before
and put back after (``CPU_STATE_KEPT``), so only the devices' generators change. It
asks no device module for ``manual_seed_all`` (``torch.mps`` has none) and reads no
device: CUDA is touched no earlier than by the original.

``torch.manual_seed(x)`` seeds the CPU and every CUDA device with ``x`` (through
``torch.cuda.manual_seed_all``, lazily where CUDA is not initialised yet); a
``torch.cuda.manual_seed(x)`` or ``manual_seed_all(x)`` right after it, with the same
``x``, leaves every generator as it was. Such a call is removed: exact on CUDA, and
nothing is left that only CUDA has. "Right after": in the same block, with only such
seed statements between them, and ``x`` a name, a number or an attribute of a name
(nothing between rebinds it, and reading it twice gives the same value).
"""

from __future__ import annotations

import re
from typing import Callable, Optional, Sequence, Set

import libcst as cst

from codemod.passes.runtime.tables import canonical

# Seed every device (the CPU's and CUDA's generators).
EVERY_DEVICE = {"torch.manual_seed", "torch.random.manual_seed"}
# Seed CUDA's generators only: the same seed again, after one of EVERY_DEVICE.
AGAIN = {"torch.cuda.manual_seed", "torch.cuda.manual_seed_all"}
# The lines a pass must see with a CUDA seed: the torch.manual_seed before it.
SEED_LINES = re.compile(r"manual_seed(?:_all)?\(")
# `torch.manual_seed(x)` with the CPU generator's state kept: the list's items are
# made in order (state saved, every device seeded), then the saved state is set.
CPU_STATE_KEPT = "{torch}.set_rng_state([{torch}.get_rng_state(), {seeded}][0])"
REMOVED = (
    "`torch.{short}({seed})` right after `torch.manual_seed({seed})`, which seeded "
    "every CUDA device with the same seed already: removed"
)


def _stable(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Name, cst.Integer)):
        return True
    return isinstance(node, cst.Attribute) and _stable(node.value)


def _seed_call(statement: cst.CSTNode, qualified_name: Callable) -> Optional[cst.Call]:
    """The call of a statement line that is only ``<seed function>(x)``."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    expr = statement.body[0]
    if not isinstance(expr, cst.Expr) or not isinstance(expr.value, cst.Call):
        return None
    call = expr.value
    if len(call.args) != 1 or call.args[0].keyword or call.args[0].star:
        return None
    name = canonical(qualified_name(call.func) or "")
    if name not in EVERY_DEVICE | AGAIN or not _stable(call.args[0].value):
        return None
    return call


def _has_comment(statement: cst.SimpleStatementLine) -> bool:
    return statement.trailing_whitespace.comment is not None or any(
        line.comment is not None for line in statement.leading_lines
    )


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def repeated_seeds(
    body: Sequence[cst.CSTNode], qualified_name: Callable
) -> Set[cst.Call]:
    """The CUDA seed calls of a block that repeat an earlier ``torch.manual_seed``
    of the same run of seed statements, on lines of their own without comments."""
    seeded: Set[str] = set()  # the seeds every device has in this run
    repeated: Set[cst.Call] = set()
    for statement in body:
        call = _seed_call(statement, qualified_name)
        if call is None:
            seeded = set()
            continue
        seed = _code(call.args[0].value)
        if canonical(qualified_name(call.func) or "") in EVERY_DEVICE:
            seeded.add(seed)
        elif seed in seeded and not _has_comment(statement):  # type: ignore[arg-type]
            repeated.add(call)
    return repeated


def removed_message(call: cst.Call, short: str) -> str:
    return REMOVED.format(short=short, seed=_code(call.args[0].value))
