"""CUDA tests that stay as they are: widening them would run CUDA's code elsewhere.

``device.type == "cuda"``, ``x.is_cuda`` and ``range(torch.cuda.device_count())``
already run on every machine (False, or no iteration, off CUDA). torchport widens
them to every accelerator where what they lead to is portable; it keeps them where:

- the code they guard is CUDA-only (``cuda_only_code``: a CUDA-only name, a reported
  literal such as ``mode="reduce-overhead"``, a function of the program's own named
  for CUDA), in an ``if``, a conditional expression or a ``for`` loop over the devices;
- a later branch of the same ``if`` chain tests another device (``elif
  device.type == "mps":``): the widened test would take that device first;
- an earlier ``if`` with the same test was kept and bound a name this one reads;
- they decide whether a test runs whose parameters name "cuda"
  (``@pytest.mark.parametrize("device", ["cpu", "cuda"])``, which stays);
- their value leaves the function (``return x.is_cuda and HAS_TRITON``): what it guards
  there is not in view; reported, so that the user decides.

The traversal calls ``mark`` on each statement and expression that can hold such a
test before any pass sees it; ``Pass.record_and_decide`` then reports a kept test
with its reason instead of fixing it.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

from codemod import catalog
from codemod.catalog import under
from codemod.passes.base import FileContext, walk
from codemod.passes.device_cases import (
    cuda_literal,
    names_launcher_device,
    vendor_answer,
)
from codemod.passes.device_positions import OTHER_DEVICES, gated_device_list
from codemod.passes.cuda_only_code import CUDA_NAMED, calls_cuda_named, cuda_only_code
from codemod.passes.guards import (
    QualifiedName,
    and_operands,
    cuda_comparison,
    cuda_string,
)
from codemod.passes.names import dotted_name
from codemod.passes.query_sites import ported_queries

OTHER_MODULES = tuple(
    f"torch.{m}" for m in ("backends.mps", "mps", "xpu", "npu", "tpu", "hpu", "mtia")
) + ("torch_xla", "torch_npu")
ESCAPES = (
    ": kept, as its value leaves the function and what it guards there is not in "
    "view; widen it where every use is portable"
)
CUDA_ONLY_BODY = (
    ": kept, as it guards CUDA-only code, which a test of any accelerator would run "
    "on other devices; port that code, then widen the test"
)
VENDOR_BODY = (
    ": kept, as what it guards answers as only CUDA does (its backend, vendor or "
    "library), which a test of any accelerator would answer on other devices"
)
LAUNCHER_BODY = (
    ': kept, as what it guards names CUDA\'s device as a launcher does ("gpu"), '
    "which another backend would be handed"
)
ANOTHER_DEVICE = (
    ": kept, as a later branch tests another device, which the widened test would "
    "take first; it is portable as it stands"
)
BOUND_BEFORE = (
    ": kept with the same test before it, whose kept branch binds what this one reads"
)
PARAMETRIZED = (
    ': kept with the test\'s parameters, which name "cuda": widened, it would run '
    "the CUDA case on other devices instead of skipping it"
)
AVAILABILITY = {"torch.cuda.is_available", "torch.cuda.device_count"}
DEVICE_LOOP = ": kept, as the loop runs CUDA-only code for each device"


def _cuda_tests(test: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The operands of an ``and`` chain that test for CUDA: ``x.is_cuda``,
    ``x == "cuda"``, ``"cuda" in x``."""
    return [
        o
        for o in and_operands(test)
        if (isinstance(o, cst.Attribute) and o.attr.value == "is_cuda")
        or cuda_comparison(o)
    ]


def _tests_another_device(node: cst.CSTNode, qualified_name: QualifiedName) -> bool:
    for part in walk(node):
        if isinstance(part, cst.SimpleString):
            if part.evaluated_value in OTHER_DEVICES:
                return True
        elif isinstance(part, cst.Attribute):
            if part.attr.value[len("is_") :] in OTHER_DEVICES:
                return True
            if under(qualified_name(part), OTHER_MODULES):
                return True
    return False


def _later_branches_test_another_device(node: cst.If, qualified_name) -> bool:
    branch = node.orelse
    while isinstance(branch, cst.If):
        if _tests_another_device(branch.test, qualified_name):
            return True
        branch = branch.orelse
    return False


def _needs_cuda(parts, qualified_name: QualifiedName) -> bool:
    return cuda_only_code(parts, qualified_name) or any(
        part is not None
        and (
            calls_cuda_named(part, qualified_name)
            or _calls_unported_cuda(part, qualified_name)
        )
        for part in parts
    )


def _needs_cuda_body(test, body, qualified_name: QualifiedName) -> Optional[str]:
    """Why what an ``if`` or a case guards keeps it CUDA's: it needs CUDA, or
    answers as only CUDA does (``return "nccl"``: ``device_cases.vendor_answer``)."""
    parts = (body,) if test is None else (test, body)
    if _needs_cuda(parts, qualified_name):
        return CUDA_ONLY_BODY
    if names_launcher_device(body):
        return LAUNCHER_BODY
    return VENDOR_BODY if vendor_answer(body) else None


# torch.cuda calls no pass ports: reported only, or unknown to the catalogue
# (`torch.cuda.memory._snapshot()`); widened, their test would run them elsewhere.
_ROWS = {n: r for r in catalog.ROWS if r.kind == "name" for n in r.names}


def _calls_unported_cuda(part: cst.CSTNode, qualified_name: QualifiedName) -> bool:
    ported = ported_queries(part, qualified_name)  # in a message, a capability test
    for call in walk(part):
        if not isinstance(call, cst.Call) or call in ported:
            continue
        name = qualified_name(call.func)
        if not name or not name.startswith("torch.cuda."):
            continue
        row = _ROWS.get(name)
        if row is None or (row.portable is None and row.rewrite in ("report", "call")):
            return True
    return False


def _device_count_loop(node: cst.For, qualified_name) -> List[cst.Call]:
    """``torch.cuda.device_count()`` in ``for i in range(...)``."""
    return [
        call
        for call in walk(node.iter)
        if isinstance(call, cst.Call)
        and qualified_name(call.func) == "torch.cuda.device_count"
    ]


def _device_list(node: cst.For, qualified_name) -> List[cst.CSTNode]:
    """``for d in ["cpu"] + ["cuda"] if torch.cuda.is_available() else []``: the
    check and the "cuda" of the list, which go together."""
    found: List[cst.CSTNode] = []
    for test in walk(node.iter):
        literals = gated_device_list(test, qualified_name)
        if literals:
            found += [test.test, *literals]  # type: ignore[attr-defined]
    return found


def kept_tests(
    node: cst.CSTNode, qualified_name: QualifiedName, kept: Dict[str, Set[str]]
) -> Dict[cst.CSTNode, str]:
    """The CUDA tests of ``node`` to keep, each with the reason a report gives
    ``kept``: each ``if`` test kept so far, as written,
    with the names its body binds; a later ``if`` with the same test that reads one
    is kept too (``if x.is_cuda: y = ...`` kept, then ``if x.is_cuda: use(y)``
    widened would read ``y`` where it is unbound)."""
    if isinstance(node, cst.If):
        tests = _cuda_tests(node.test)
        if not tests:  # `if torch.cuda.device_count() > 1: ... elif <xpu test>:`
            return _availability_before_another_device(node, qualified_name)
        reason = _needs_cuda_body(node.test, node.body, qualified_name)
        if reason is None and _later_branches_test_another_device(node, qualified_name):
            reason = ANOTHER_DEVICE
        if reason is None and _reads_what_a_kept_test_bound(node, kept):
            reason = BOUND_BEFORE
        if reason is None:
            return {}
        kept.setdefault(_text(node.test), set()).update(_bound(node.body))
        return dict.fromkeys(tests, reason)
    elif isinstance(node, cst.IfExp):
        tests = _cuda_tests(node.test)
        reason = _needs_cuda_body(node.test, node.body, qualified_name)
        if tests and reason is not None:
            return dict.fromkeys(tests, reason)
        if tests and _tests_another_device(node.orelse, qualified_name):
            return dict.fromkeys(tests, ANOTHER_DEVICE)
    elif isinstance(node, cst.Match):
        return _kept_cases(node, qualified_name)
    elif isinstance(node, cst.For):
        if _needs_cuda((node.body,), qualified_name):
            loop = _device_count_loop(node, qualified_name)
            return dict.fromkeys(loop + _device_list(node, qualified_name), DEVICE_LOOP)
    elif isinstance(node, cst.Return) and node.value is not None:
        return dict.fromkeys(_returned_tests(node.value), ESCAPES)
    elif isinstance(node, cst.FunctionDef) and _parametrized_with_cuda(node):
        return {
            call: PARAMETRIZED
            for decorator in node.decorators
            for call in walk(decorator)
            if isinstance(call, cst.Call) and qualified_name(call.func) in AVAILABILITY
        }
    elif isinstance(node, cst.FunctionDef) and CUDA_NAMED.search(node.name.value):
        # `def is_cuda_available(): return torch.cuda.is_available()`: its callers
        # ask for CUDA by name.
        return {
            call: ESCAPES
            for ret in walk(node.body)
            if isinstance(ret, cst.Return) and ret.value is not None
            for call in _returned_operands(ret.value)
            if isinstance(call, cst.Call)
            and qualified_name(call.func) == "torch.cuda.is_available"
        }
    return {}


def _availability_before_another_device(
    node: cst.If, qualified_name: QualifiedName
) -> Dict[cst.CSTNode, str]:
    """The availability calls of ``node``'s test, where a later branch tests
    another device: widened, that device would take the first branch."""
    calls = [
        call
        for call in walk(node.test)
        if isinstance(call, cst.Call) and qualified_name(call.func) in AVAILABILITY
    ]
    if calls and _later_branches_test_another_device(node, qualified_name):
        return dict.fromkeys(calls, ANOTHER_DEVICE)
    return {}


def _parametrized_with_cuda(node: cst.FunctionDef) -> bool:
    """``@pytest.mark.parametrize("device", ["cpu", "cuda"])``: "cuda" stays."""
    for decorator in node.decorators:
        call = decorator.decorator
        if isinstance(call, cst.Call) and (dotted_name(call.func) or "").endswith(
            "parametrize"
        ):
            if any(
                isinstance(n, cst.SimpleString) and cuda_string(n) for n in walk(call)
            ):
                return True
    return False


def _returned_operands(value: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The returned value, or its operands of ``and``/``or``/``not`` (not those of a
    conditional expression, which decide a value in view)."""
    if isinstance(value, cst.BooleanOperation):
        return _returned_operands(value.left) + _returned_operands(value.right)
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not):
        return _returned_operands(value.expression)
    return [value]


def _returned_tests(value: cst.BaseExpression) -> List[cst.BaseExpression]:
    return [t for o in _returned_operands(value) for t in _cuda_tests(o)]


MARKED = frozenset({"If", "IfExp", "Match", "For", "Return", "FunctionDef"})


def _kept_cases(node: cst.Match, qualified_name) -> Dict[cst.CSTNode, str]:
    """The "cuda" of each ``case "cuda":`` to keep: its body is CUDA-only, or a
    later case names another device (the widened case, tested first, would take
    that device)."""
    kept: Dict[cst.CSTNode, str] = {}
    for position, case in enumerate(node.cases):
        literal = cuda_literal(case)
        if literal is None:
            continue
        others = [c.pattern for c in node.cases[position + 1 :]]
        reason = _needs_cuda_body(None, case.body, qualified_name)
        if reason is not None:
            kept[literal] = reason
        elif any(_tests_another_device(p, qualified_name) for p in others):
            kept[literal] = ANOTHER_DEVICE
    return kept


def _bound(body: cst.CSTNode) -> Set[str]:
    return {
        n.target.value
        for n in walk(body)
        if isinstance(n, cst.AssignTarget) and isinstance(n.target, cst.Name)
    }


def _reads_what_a_kept_test_bound(node: cst.If, kept: Dict[str, Set[str]]) -> bool:
    bound = kept.get(_text(node.test))
    return bool(bound) and any(
        isinstance(n, cst.Name) and n.value in bound for n in walk(node.body)
    )


def _text(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


_EMPTY = cst.Module([])


def mark(node: cst.CSTNode, context: FileContext, qualified_name) -> None:
    """Record ``node``'s kept tests in ``context.kept_for_cuda``; ``qualified_name``
    resolves a node of this traversal where it is (``Pass.qualified_name``)."""
    kept = kept_tests(node, qualified_name, context.kept_test_texts)
    context.kept_for_cuda.update(kept)
