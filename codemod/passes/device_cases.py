"""``case "cuda":`` in a ``match`` on a device string, and ``x in ["cuda"]``, for the
device-strings pass.

A literal pattern matches when the subject equals it, so ``case "cuda":`` is the
test ``subject == "cuda"`` (TP104). A pattern cannot call the device binding, so the
case becomes the wildcard with that test as its guard:
``case _ if subject == _DEVICE().type != "cpu":`` (never true on the CPU, as the
original never matched there), the subject read again by the guard. Only a subject
that is a name or an attribute of one (``dev``, ``args.device``) is read again; a
case with a guard of its own, or another pattern around the literal, is reported.
Cases kept for CUDA (a body that is CUDA-only, another case that names another
device) are decided with the other kept tests (``codemod.passes.kept_for_cuda``).

A membership test in a list of devices is a comparison too: ``x in ["cuda"]`` is
``x == "cuda"``. A list naming another accelerator as well (``x in ["cuda",
"xpu"]``) is left as it is and reported (``OTHER_LISTED``): on any other accelerator
it is false where CUDA takes it, and no form of the list alone tells the device in
use from the CPU (``_DEVICE().type`` is "cpu" there).

A case, like an ``if``, is kept for CUDA when its body gives a vendor's answer
(``VENDOR_ANSWERS``): ``case "cuda": return "nccl"`` widened would answer NCCL or
NVIDIA on every accelerator; or when it names CUDA's device as a launcher does
(``accelerator="gpu"``), which another backend would be handed.
"""

from __future__ import annotations

from typing import Dict

import libcst as cst

from codemod.passes.base import walk
from codemod.passes.device_pickers import DevicePickers
from codemod.passes.device_positions import OTHER_DEVICES, Kind, device_literal
from codemod.passes.device_tables import DeviceTables
from codemod.passes.names import dotted_name

OTHER_LISTED = (
    '"cuda" in a list that names another accelerator too: left as it is; on any '
    "other accelerator the test is false where CUDA's is true. Where that device "
    'should take CUDA\'s path, test `<x> == _DEVICE().type != "cpu"` as well'
)
# Answers only CUDA gives: its backend, its vendor, its libraries and tools.
VENDOR_ANSWERS = frozenset({"nccl", "nvidia", "cudnn", "cublas", "nvcc", "nvrtc"})
# Launchers' names for CUDA's device (Lightning's accelerator="gpu"), which no
# other backend answers to: wherever the guarded code has one, the guard stays.
LAUNCHER_DEVICES = frozenset({"gpu"})
LEFT = (
    '`case "cuda":` {why}: left as it is; to match the device in use, write '
    '`case _ if <subject> == _DEVICE().type != "cpu":`'
)
GUARDED = "with a guard of its own"
SUBJECT = "on a subject that is not a name or an attribute of one"
CASE_GUARD = '{subject} == {device}.type != "cpu"'
ACCELERATOR_CASE_GUARD = "{subject} == {device}.type"


def cuda_literal(case: cst.MatchCase):
    """The "cuda" of ``case "cuda":``, else None."""
    pattern = case.pattern
    if isinstance(pattern, cst.MatchValue) and isinstance(
        pattern.value, cst.SimpleString
    ):
        if pattern.value.evaluated_value == "cuda":
            return pattern.value
    return None


def vendor_answer(part: cst.CSTNode) -> bool:
    """Whether ``part`` returns or assigns one of ``VENDOR_ANSWERS`` (or is one, as
    the chosen value of a conditional expression is)."""
    values = [part]
    for node in walk(part):
        if isinstance(node, (cst.Return, cst.Assign, cst.AnnAssign, cst.AugAssign)):
            values.append(node.value)
    return any(
        isinstance(s, cst.SimpleString)
        and str(s.evaluated_value).lower() in VENDOR_ANSWERS
        for value in values
        if value is not None
        for s in ([value] if value is part else walk(value))
    )


def names_launcher_device(part: cst.CSTNode) -> bool:
    """Whether ``part`` has a string that is exactly one of ``LAUNCHER_DEVICES``."""
    return any(
        isinstance(s, cst.SimpleString) and s.evaluated_value in LAUNCHER_DEVICES
        for s in walk(part)
    )


class DeviceCases(DeviceTables, DevicePickers):
    """Mixin for the device-strings pass, with its tables and pickers: its ``kinds``
    (a literal marked IGNORE is left to this mixin), ``report``,
    ``record_and_decide`` and ``expr``."""

    def __init__(self, context) -> None:
        super().__init__(context)  # type: ignore[call-arg]
        self.cases: Dict[cst.MatchCase, cst.BaseExpression] = {}  # case -> subject

    def visit_Match(self, node: cst.Match) -> None:
        subject = node.subject if dotted_name(node.subject) else None
        for case in node.cases:
            literal = cuda_literal(case)
            if literal is None:
                continue
            self.kinds[literal] = (Kind.IGNORE, "")  # type: ignore[attr-defined]
            why = GUARDED if case.guard is not None else None
            why = why or (SUBJECT if subject is None else None)
            if why is not None:
                self.report(literal, "TP109", LEFT.format(why=why))  # type: ignore
                continue
            self.cases[case] = subject  # type: ignore[assignment]
            if self.would_apply(literal, "TP104"):  # type: ignore[attr-defined]
                self.context.accelerator_tests.add(case)  # type: ignore

    def leave_MatchCase(self, original_node, updated_node):
        subject = self.cases.get(original_node)
        if subject is None:
            return updated_node
        literal = cuda_literal(original_node)
        if not self.record_and_decide(literal, "TP104"):  # type: ignore[attr-defined]
            return updated_node
        accelerated = self.in_accelerated_branch()  # type: ignore[attr-defined]
        template = ACCELERATOR_CASE_GUARD if accelerated else CASE_GUARD
        guard = self.expr(template, subject=subject.deep_clone())  # type: ignore
        space = cst.SimpleWhitespace(" ")
        return updated_node.with_changes(
            pattern=cst.MatchAs(),
            guard=guard,
            whitespace_before_if=space,
            whitespace_after_if=space,
        )

    def _visit_device_list(self, node: cst.Comparison, target) -> None:
        """``x in ["cuda"]`` is ``x == "cuda"`` (``not in``: ``!=``); a list that
        names another accelerator too (``x not in ["cuda", "xpu"]``) says which
        devices get the code, is false on any other, and is portable as it stands."""
        values = [e.value for e in target.comparator.elements]
        names = [
            device_literal(v) or getattr(v, "evaluated_value", None) for v in values
        ]
        if "cuda" not in names or self._is_cuda_only_test((node.left,)):
            return
        literal = values[names.index("cuda")]
        if OTHER_DEVICES.intersection(names):
            self.kinds[literal] = (Kind.IGNORE, "")
            self.report(node, "TP104", OTHER_LISTED)  # type: ignore[attr-defined]
            return
        if len(values) != 1:  # ["cpu", "cuda"]: reported, what it allows is unclear
            return
        self.kinds[literal] = (Kind.IGNORE, "")
        self.kinds[node] = (Kind.STRING, "TP104")
        self.membership[node] = (
            cst.Equal if isinstance(target.operator, cst.In) else cst.NotEqual
        )
        if isinstance(target.operator, cst.In) and self.would_apply(node, "TP104"):
            self.context.accelerator_tests.add(node)
