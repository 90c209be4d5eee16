"""Whether a ``torch.cuda.is_available()`` test is widened to every accelerator or
kept (TP301).

A test is widened only when what it guards no longer needs CUDA once every pass has
rewritten it. It is kept, and said why, when it guards code that stays CUDA-only,
when it is an early exit (``if not torch.cuda.is_available(): return``) whose block
is not in view or stays CUDA-only, and when
it is a fallback check that takes the CPU when the "cuda" asked for is missing. The
``is_available()`` calls of a test are held back (``defer``) until the whole ``if``
(or the rest of an early exit's block) is known.

An early exit that stops the program (``assert torch.cuda.is_available(), "needs a
GPU"``, ``if not ...: raise``/``sys.exit(msg)``) is a hard requirement: it becomes
one of an accelerator whatever follows, its message unchanged. Widened, it stops
only where no accelerator is, and what follows runs only where the original
stopped.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Union

import libcst as cst

from codemod.catalog import under
from codemod.passes.amp_forms import cuda_fallback
from codemod.passes.cuda_only_code import (
    calls_cuda_named,
    cuda_only_code,
    guards_cuda_only_code,
)
from codemod.passes.device_cases import LAUNCHER_DEVICES, names_launcher_device
from codemod.passes.guards import (
    and_operands,
    exit_guards,
    fallback_checks,
    is_cuda_test,
    raising_exit,
)
from codemod.passes.base import attribute_name, walk
from codemod.passes.runtime.tables import CUDA_ONLY_MODULES

FALLBACK = (
    '`torch.cuda.is_available()` kept: with the "cuda" asked for, it takes the CPU '
    "fallback when CUDA is missing; widened, the fallback would no longer be taken "
    "(choose the device from `_DEVICE()` instead)"
)
KEPT_EXIT = (
    "`torch.cuda.is_available()` kept: this early exit guards the rest of its block, "
    "which is not in view here; widen it by hand once that code is portable"
)
KEPT_GUARD = (
    "`torch.cuda.is_available()` kept: the code it guards still needs CUDA once "
    "rewritten; port that code, then widen the guard"
)
_CUDA_LITERAL = re.compile(r"cuda(?::\d+)?")
LAUNCHER_GUARD = (
    "`torch.cuda.is_available()` kept: the code it guards names CUDA's device as a "
    'launcher does ("gpu", Lightning\'s accelerator), which another backend would '
    "be handed; choose the launcher's device by hand"
)
# The tests of CUDA an `if` may keep: `if torch.cuda.device_count() > 1:` around
# nn.DataParallel stays CUDA's, as `is_available()` does.
TESTS = ("torch.cuda.is_available", "torch.cuda.device_count")


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(original_node, updated_node)


class AvailabilityTests:
    """The ``is_available()`` tests of one run of the pass (``runtime``: the pass,
    for names, reports, and the rewrite of a test's call once it is widened)."""

    def __init__(self, runtime) -> None:
        self.runtime = runtime
        # is_available() calls in an if-test, decided when the whole `if` is known.
        self.tests: Dict[cst.CSTNode, List[cst.Call]] = {}
        self.pending: Dict[cst.Call, cst.Call] = {}  # original -> updated
        # Early exits (`if not ...is_available(): return`, `assert ...`): decided
        # with the rest of their block, which is what they guard.
        self.early: Set[cst.CSTNode] = set()
        self.fallbacks: Set[cst.CSTNode] = set()  # tests that pick the CPU: kept

    # -- noted top-down ---------------------------------------------------------
    def note_test(self, node: cst.CSTNode, test: cst.CSTNode) -> None:
        callee = self.runtime.callee
        checks = [
            n for n in walk(test) if isinstance(n, cst.Call) and callee(n) in TESTS
        ]
        if checks:
            self.tests[node] = checks

    def note_fallback(self, node: Union[cst.If, cst.IfExp]) -> None:
        """Keep a fallback check as written: its "cuda" is what the user asked for
        (no other pass rewrites it), its availability check is CUDA's."""
        runtime = self.runtime
        comparisons, checks = fallback_checks(node, runtime.qualified_name)
        for comparison in comparisons:
            runtime.context.claim(comparison)
        self.fallbacks.update(checks)
        if checks and node not in checks:  # the comparison has a line of its own
            runtime.report(node, "TP301", FALLBACK)

    def note_exits(self, block: Union[cst.Module, cst.IndentedBlock]) -> None:
        for _, guard in exit_guards(block.body, self.runtime.qualified_name):
            self.early.add(guard)

    def note_assert(self, node: cst.Assert) -> None:
        if node in self.early:
            self.note_test(node, node.test)

    def defers(self, call: cst.Call) -> bool:
        """Whether ``call`` is decided with its test (see ``defer``)."""
        return any(call in calls for calls in self.tests.values())

    def defer(self, original: cst.Call, updated: cst.Call) -> None:
        self.pending[original] = updated

    # -- decided bottom-up ------------------------------------------------------
    def decide_exits(self, original, updated):
        """Decide each early exit of a block with the statements after it. A module
        here is a chunk of the file (codemod.rewrite.chunks): unless it ends its block (a
        chunk holding an early exit runs to the end of its block), later statements
        are not in view and its early exits are kept (and reported)."""
        body = list(updated.body)
        aligned = len(body) == len(original.body)
        if (
            isinstance(original, cst.Module)
            and not self.runtime.context.chunk_ends_block
        ):
            aligned = False
        qualified_name = self.runtime.qualified_name
        for index, guard in exit_guards(original.body, qualified_name):
            if guard not in self.tests:
                continue
            rest = (original.body[index + 1 :], body[index + 1 :])
            statement = body[index] if aligned else None
            if raising_exit(guard, qualified_name) and len(body) == len(original.body):
                # A hard requirement: widened, it stops only where no accelerator
                # is, and what follows runs where the original had stopped.
                rest, statement = ((), ()), body[index]
            if isinstance(guard, cst.Assert):
                line = original.body[index]
                small = list(getattr(statement, "body", ()))
                if len(small) != len(line.body) or not isinstance(  # type: ignore
                    statement, cst.SimpleStatementLine
                ):
                    self.decide(guard, guard, kept=True)
                    continue
                at = line.body.index(guard)  # type: ignore[attr-defined]
                small[at] = self.decide(guard, small[at], rest)
                body[index] = statement.with_changes(body=small)
            elif isinstance(statement, cst.If):
                body[index] = self.decide(guard, statement, rest)
            else:
                self.decide(guard, guard, kept=True)
        return updated.with_changes(body=body)

    def decide(self, original, updated, guarded=None, kept=False):
        """``torch.cuda.is_available()`` in a test becomes portable only when what it
        guards no longer needs CUDA once every pass has rewritten it. What an early
        exit guards is the rest of its block (``guarded``: those statements, as
        written and as rewritten); it is decided with its block."""
        if guarded is None and original in self.early and not kept:
            return updated
        checks = self.tests.pop(original, ())
        if not checks:
            return updated
        runtime = self.runtime
        unseen = kept and guarded is None  # an early exit whose block is not in view
        if original in self.fallbacks:
            for check in checks:
                runtime.report(check, "TP301", FALLBACK)
            return updated
        if guarded is not None or kept:
            written, rewritten = guarded or ((), ())
            recognized = False  # the CUDA-only pass sees no block: reported here
            kept = (
                kept
                or cuda_only_code(written, runtime.qualified_name)
                or self._cuda_only(getattr(updated, "body", None), *rewritten)
            )
        else:
            recognized = guards_cuda_only_code(original, runtime.qualified_name)
            kept = self._cuda_only(updated.body, updated.orelse)
        if recognized or kept:
            # A CUDA-only guard stays. The CUDA-only pass reports the guards it
            # recognizes (TP910); the others are reported here, never left silent.
            message = KEPT_EXIT if unseen else KEPT_GUARD
            if not unseen and self._names_launcher_device(original, guarded):
                message = LAUNCHER_GUARD
            if not recognized:
                for check in checks:
                    said = f"`{runtime.callee(check)}()`"
                    text = message.replace("`torch.cuda.is_available()`", said)
                    if check in runtime.context.kept_for_cuda:
                        text = ""  # the kept test's own reason says why
                    runtime.report(check, "TP301", text)
            return updated
        replacements = {}
        for check in checks:
            old = self.pending.pop(check, None)
            if old is None:
                continue
            new = runtime.rewrite_call(check, old, runtime.callee(check))
            if new is not old:
                replacements[old] = new
        if not replacements:
            return updated
        # All at once: a tree rebuilt by one replacement no longer holds the nodes
        # the next would look for (`is_available() and device_count() >= n`).
        return updated.with_changes(test=updated.test.visit(_Replace(replacements)))

    def _cuda_only(self, *parts: Optional[cst.CSTNode]) -> bool:
        """Whether rewritten code still needs CUDA: a torch.cuda name (other than
        AMP, which has a portable form), a `.cuda()`, a "cuda" string, a string
        naming a torch.cuda type, a CUDA-only library, or a function of the program's
        named for CUDA (`dtw_cuda(x)`); what runs only under
        ``if _DEVICE().type == "cuda":`` does not count."""
        qualified_name = self.runtime.qualified_name
        for part in parts:
            if part is None:
                continue
            if calls_cuda_named(part, qualified_name):
                return True
            for node in self._outside_cuda_branches(part):
                if isinstance(node, cst.SimpleString):
                    value = node.evaluated_value
                    if isinstance(value, str) and (
                        _CUDA_LITERAL.fullmatch(value)
                        or value in LAUNCHER_DEVICES
                        or value.startswith("torch.cuda.")  # "torch.cuda.FloatTensor"
                    ):
                        return True
                elif isinstance(node, cst.Call) and attribute_name(node) == "cuda":
                    if not qualified_name(node.func):
                        return True
                elif isinstance(node, (cst.Name, cst.Attribute)):
                    name = qualified_name(node) or ""
                    if under(name, CUDA_ONLY_MODULES):
                        return True
                    if name.startswith("torch.cuda.") and not under(
                        name, ("torch.cuda.amp", "torch.cuda.is_available")
                    ):
                        return True
        return False

    @staticmethod
    def _names_launcher_device(original, guarded) -> bool:
        """Whether the code a kept test guards names a launcher's "gpu"."""
        parts = list(guarded[0]) if guarded else [getattr(original, "body", None)]
        return any(p is not None and names_launcher_device(p) for p in parts)

    def _outside_cuda_branches(self, node: cst.CSTNode):
        """``node`` and what is below it, but for the test and body of each ``if
        _DEVICE().type == "cuda":`` (its ``else`` included), of each ``X if
        _DEVICE().type == "cuda" else Y`` (its ``Y`` included) and the operands after
        ``_DEVICE().type == "cuda" and``: what the queries pass keeps for CUDA."""
        device_name = self.runtime.context.device_name
        stack = [node]
        fallbacks = set()  # CUDA's disabled autocast, where there is no accelerator
        while stack:
            current = stack.pop()
            if current in fallbacks:
                continue
            fallbacks.add(cuda_fallback(current))
            yield current
            if isinstance(current, cst.If) and is_cuda_test(current.test, device_name):
                stack.extend([current.orelse] if current.orelse else [])
            elif isinstance(current, cst.IfExp) and is_cuda_test(
                current.test, device_name
            ):
                stack.append(current.orelse)
            elif isinstance(current, cst.BooleanOperation) and isinstance(
                current.operator, cst.And
            ):
                operands = and_operands(current)
                tests = [is_cuda_test(o, device_name) for o in operands]
                end = tests.index(True) + 1 if True in tests else len(operands)
                stack.extend(reversed(operands[:end]))
            else:
                stack.extend(reversed(current.children))
