"""TP1xx: hard-coded CUDA device strings and ``torch.device("cuda")``.

Only string literals whose *position* means "a device" are rewritten. A parent
node (a call argument, a comparison, an assignment to a ``*device*`` name, ...)
classifies its child literal on the way down; the literal is rewritten on the way
up. Every other literal that is exactly ``"cuda"`` or ``"cuda:N"`` is reported.
Types are kept: a string becomes ``_DEVICE().type`` (or ``f"{_DEVICE().type}:N"``), and
only positions that take a ``torch.device`` get ``_DEVICE()`` itself. The positions,
and what each takes, are ``codemod.passes.device_positions``.
"""

from __future__ import annotations

import re
from typing import Dict, Optional, Set, Tuple

import libcst as cst

from codemod import catalog
from codemod.passes.amp_forms import AmpDeviceTypes
from codemod.passes.base import Pass, attribute_name, option_name, target_name
from codemod.passes.device_cases import DeviceCases
from codemod.passes.device_positions import (
    DEVICE_KEYWORDS,
    DEVICE_METHODS,
    DEVICE_POSITIONS,
    DEVICE_TEMPLATE,
    Kind,
    Literal,
    MESSAGE_CALLS,
    device_literal,
    gated_device_list,
    is_cpu_literal,
    is_index_name,
    CURRENT_DEVICE,
    index_hits,
    location_index,
    mentions_device,
)
from codemod.passes.device_forms import (
    ACCELERATOR_COMPARISONS,
    ACCELERATOR_INDEXED_DEVICE,
    COMPARISONS,
    INDEXED_DEVICE,
    DeviceTemplates,
    device_arguments,
    index_of,
)
from codemod.passes.guards import (
    AcceleratedBranches,
    is_binding_type,
    without_guards,
)
from codemod.rules.device_strings import RULES

INDEX = "an int device index means that CUDA device (and raises without one)"
MESSAGE = (
    'hard-coded "cuda" in a message (only printed or logged): left as it is; '
    "if it should name the device in use, derive it from `_DEVICE().type`"
)


def _default_of(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The default of ``getattr(x, name, default)`` or ``x.get(key, default)``."""
    args = call.args
    if any(a.keyword is not None or a.star for a in args):
        return None
    if isinstance(call.func, cst.Name) and call.func.value == "getattr":
        return args[2].value if len(args) == 3 else None
    if attribute_name(call) == "get" and len(args) == 2:
        return args[1].value
    return None


class DeviceStrings(
    AmpDeviceTypes, DeviceTemplates, DeviceCases, AcceleratedBranches, Pass
):
    RULES = RULES
    TRIGGER = catalog.trigger_of("device_strings")
    # `.to(gpu_id)`, `device=rank`: an index, on a line that need not say "cuda".
    # No leading \b: a literal first lets the regex engine skip ahead (ten times
    # faster on a large file), and a few more lines seen cost nothing.
    HITS = re.compile(r"(?:to\(|device=)\s*(?:\w+\.)?\w*(?:rank|gpu|gpu_id|gpu_idx)\b")

    @classmethod
    def hits_in(cls, source: str):
        return index_hits(cls.HITS, source)

    def __init__(self, context) -> None:
        super().__init__(context)
        self.kinds: Dict[cst.CSTNode, Tuple[Kind, str]] = {}
        self.collapse: Set[cst.CSTNode] = set()  # IfExps that become the binding
        self.device_types: Set[cst.CSTNode] = (
            set()
        )  # _DEVICE().type nodes we built (kept alive: an id could be reused)
        self.messages: Set[cst.CSTNode] = set()  # arguments of print() and log calls
        self.indices: Set[cst.CSTNode] = set()  # int device indices: `.to(gpu_id)`
        # Names assigned `torch.cuda.current_device()`: an int, a device index.
        self.index_variables: Set[str] = set()
        # `x in ["cuda"]` -> the operator of the comparison it means (`==`).
        self.membership: Dict[cst.Comparison, type] = {}

    # -- classification, top-down ---------------------------------------------
    def mark(self, node: cst.CSTNode, kind: Kind, code: str) -> None:
        if kind in (Kind.OBJECT, Kind.LOCATION) and (
            is_index_name(node, self.context.int_options)
            or isinstance(node, cst.Name)
            and node.value in self.index_variables
        ):
            self.indices.add(node)
        if device_literal(node) or isinstance(node, cst.IfExp):
            self.kinds.setdefault(node, (kind, code))
        elif isinstance(node, cst.Call):  # a default: getattr(args, "device", "cuda")
            default = _default_of(node)
            if default is not None:  # a string, as written: either value may come
                self.mark(default, Kind.STRING, code)

    def _mark_template(self, node: cst.CSTNode, formatted: cst.CSTNode) -> None:
        """``node`` is the template of ``formatted`` (a ``.format()`` call or a
        ``%`` operation)."""
        if isinstance(node, cst.SimpleString) and DEVICE_TEMPLATE.fullmatch(
            str(node.evaluated_value)
        ):
            if formatted in self.messages:
                self.kinds[node] = (Kind.MESSAGE, "TP109")
            else:
                self.kinds[node] = (Kind.TEMPLATE, "TP102")

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.Modulo):
            self._mark_template(node.left, node)

    def _mark_messages(self, node: cst.Call) -> None:
        name = attribute_name(node)
        if name is None and isinstance(node.func, cst.Name):
            name = node.func.value
        if name not in MESSAGE_CALLS:
            return
        for arg in node.args:
            self.messages.add(arg.value)
            if device_literal(arg.value):
                self.kinds.setdefault(arg.value, (Kind.MESSAGE, "TP109"))

    def visit_Call(self, node: cst.Call) -> None:
        self._mark_messages(node)
        if attribute_name(node) == "format":
            self._mark_template(node.func.value, node)  # type: ignore[attr-defined]
        callee = self.callee(node)
        torch_callee = bool(callee and callee.startswith("torch"))
        position: Optional[Tuple[int, Kind]] = None
        code = "TP101" if callee == "torch.device" else "TP102"
        self.note_amp_call(node, callee, code)
        if callee in DEVICE_POSITIONS:
            position = DEVICE_POSITIONS[callee]
        elif isinstance(node.func, cst.Attribute):
            position = DEVICE_METHODS.get(node.func.attr.value)
            torch_callee = torch_callee or position is not None
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if position and position[0] < len(positional):
            self.mark(positional[position[0]].value, position[1], code)
        for arg in node.args:
            if arg.keyword is None:
                continue
            keyword = arg.keyword.value
            if callee and callee.startswith("torch.cuda."):
                break  # the runtime pass maps these by the target's signature
            if keyword in DEVICE_KEYWORDS:
                kind = DEVICE_KEYWORDS[keyword] if torch_callee else Kind.STRING
                if kind is Kind.LOCATION and callee != "torch.load":
                    kind = Kind.OBJECT
                self.mark(arg.value, kind, code)
            elif keyword == "type" and callee == "torch.device":
                if device_literal(arg.value) == "cuda":
                    self.mark(arg.value, Kind.STRING, code)
            elif keyword == "default" and mentions_device(option_name(node)):
                self.mark(arg.value, Kind.STRING, "TP105")

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.context.device_values and device_literal(node.value):
            kind = self.context.device_values.get(self.position(node.value))
            if kind is not None:  # read only as a device (codemod.passes.device_values)
                self.mark(node.value, kind, "TP102")
        if any(mentions_device(target_name(t.target)) for t in node.targets):
            self.mark(node.value, Kind.STRING, "TP105")
        value = node.value
        if isinstance(value, cst.Call) and self.callee(value) == CURRENT_DEVICE:
            self.index_variables.update(
                t.target.value for t in node.targets if isinstance(t.target, cst.Name)
            )

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and mentions_device(target_name(node.target)):
            self.mark(node.value, Kind.STRING, "TP105")

    def visit_Param(self, node: cst.Param) -> None:
        if node.default is not None and mentions_device(node.name.value):
            self.mark(node.default, Kind.STRING, "TP105")

    def visit_DictElement(self, node: cst.DictElement) -> None:
        self.kinds[node.key] = (Kind.IGNORE, "")
        if isinstance(node.key, cst.SimpleString) and mentions_device(
            str(node.key.evaluated_value)
        ):
            self.mark(node.value, Kind.STRING, "TP105")

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        if isinstance(node.slice, cst.Index):
            self.kinds[node.slice.value] = (Kind.IGNORE, "")

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self.note_flag(node)
        if self.keep_fallback(node):
            return
        cuda_body = device_literal(node.body) == "cuda"
        if (
            cuda_body
            and is_cpu_literal(node.orelse)
            and self._is_availability(node.test)
        ):
            self.collapse.add(node)
            self.kinds[node.body] = (Kind.IGNORE, "")
            self.context.claim(node.test)  # the binding: no other pass rewrites it
            return
        # `["cpu"] + ["cuda"] if torch.cuda.is_available() else []`: the devices
        # there are, which the accelerator's check and type say for every one.
        for literal in gated_device_list(node, self.qualified_name) or ():
            self.kinds[literal] = (Kind.STRING, "TP103")
        kind, code = self.kinds.get(node, (Kind.STRING, "TP103"))
        if kind is Kind.IGNORE:
            return
        for branch, other in ((node.body, node.orelse), (node.orelse, node.body)):
            if device_literal(branch) and (is_cpu_literal(other) or node in self.kinds):
                self.kinds.setdefault(branch, (Kind.STRING, code))

    def _is_availability(self, test: cst.BaseExpression) -> bool:
        return (
            isinstance(test, cst.Call)
            and self.callee(test) == "torch.cuda.is_available"
        )

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) != 1:
            return
        target = node.comparisons[0]
        if isinstance(target.operator, (cst.Equal, cst.NotEqual)):
            sides = (node.left, target.comparator)
        elif isinstance(target.operator, (cst.In, cst.NotIn)) and isinstance(
            target.comparator, (cst.List, cst.Tuple, cst.Set)
        ):
            self._visit_device_list(node, target)
            return
        elif isinstance(target.operator, (cst.In, cst.NotIn)):
            # `"cuda" in device` tests a device string; `"cuda" in versions` is a
            # lookup in some mapping: only the former is rewritten.
            container = cst.Module([]).code_for_node(target.comparator)
            if not re.search("dev", container, re.IGNORECASE):
                return
            sides = (node.left,)
        else:
            return
        for side in sides:
            if device_literal(side) == "cuda":
                self.kinds[side] = (Kind.IGNORE, "")
                if not self._is_cuda_only_test(sides):
                    self.kinds[node] = (Kind.STRING, "TP104")
                    if isinstance(
                        target.operator, (cst.Equal, cst.In)
                    ) and self.would_apply(node, "TP104"):
                        self.context.accelerator_tests.add(node)
                return

    def _is_cuda_only_test(self, sides) -> bool:
        """``_DEVICE().type == "cuda"`` of the binding: the guard of code kept for CUDA
        alone (nvtx, allocator settings), which must stay CUDA-only."""
        return any(is_binding_type(side, self.context.device_name) for side in sides)

    # -- rewriting, bottom-up -------------------------------------------------
    def _string_type(self) -> cst.Attribute:
        node = self.device_type()
        self.device_types.add(node)
        return node

    def _replacement(
        self, original: Literal, updated: Literal, kind: Kind
    ) -> cst.BaseExpression:
        literal = device_literal(original)
        if literal == "cuda":
            if kind in (Kind.OBJECT, Kind.LOCATION):
                return self.device()
            if kind is Kind.AMP:
                return self.amp_device_type(original)
            return self._string_type()
        index = location_index(updated) if kind is Kind.LOCATION else None
        if index is not None:
            return self.expr(self._indexed_device(), index=index)
        # "cuda:N" / f"cuda:{i}" -> f"{_DEVICE().type}:N" / f"{_DEVICE().type}:{i}"
        if isinstance(original, cst.SimpleString):
            quote = original.quote
            rest = [cst.FormattedStringText(literal[len("cuda") :])]
        else:  # the fields as the other passes left them
            quote = original.start[len(original.prefix) :]
            first = updated.parts[0]  # type: ignore[union-attr]
            rest = [first.with_changes(value=first.value[len("cuda") :])]  # type: ignore[union-attr]
            rest += list(updated.parts[1:])  # type: ignore[union-attr]
        head = cst.FormattedStringExpression(self.device_type())
        return cst.FormattedString(parts=[head, *rest], start="f" + quote, end=quote)

    def _leave_literal(self, original: Literal, updated: Literal) -> cst.BaseExpression:
        kind, code = self.kinds.get(original, (None, "TP109"))
        if kind is Kind.MESSAGE:
            self.report(original, code, MESSAGE)
            return updated
        if kind is Kind.TEMPLATE:
            return updated  # rewritten with its .format() call or % operation
        if device_literal(original) is None:
            return updated
        if kind is Kind.IGNORE:
            return updated
        if kind is None:
            self.report(original, "TP109")
            return updated
        if self.decide_literal(original, code, kind):
            return self._replacement(original, updated, kind)
        return updated

    def _is_template(self, node: cst.CSTNode) -> bool:
        return self.kinds.get(node, (None,))[0] is Kind.TEMPLATE

    def leave_BinaryOperation(self, original_node, updated_node):
        if isinstance(original_node.operator, cst.Modulo) and self._is_template(
            original_node.left
        ):
            return self._percent(original_node, updated_node)
        return updated_node

    def leave_SimpleString(self, original_node, updated_node):
        return self._leave_literal(original_node, updated_node)

    def leave_FormattedString(self, original_node, updated_node):
        return self._leave_literal(original_node, updated_node)

    def leave_IfExp(self, original_node, updated_node):
        if original_node not in self.collapse:
            return updated_node
        kind = self.kinds.get(original_node, (Kind.STRING, ""))[0]
        if not self.record_and_decide(original_node, "TP103"):
            return updated_node
        return self.device() if kind is Kind.OBJECT else self._string_type()

    def _indexed_device(self) -> str:
        if self.in_accelerated_branch():
            return ACCELERATOR_INDEXED_DEVICE
        return INDEXED_DEVICE

    def _index_arguments(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """``x.to(gpu_id)`` -> ``x.to(torch.device(_DEVICE().type, gpu_id) if ... else
        _DEVICE())``."""
        args = list(updated.args)
        for position, arg in enumerate(original.args):
            if arg.value in self.indices and self.record_and_decide(
                arg.value, "TP102", INDEX
            ):
                value = self.expr(self._indexed_device(), index=args[position].value)
                args[position] = args[position].with_changes(value=value)
        return updated.with_changes(args=args)

    def leave_Call(self, original_node, updated_node):
        if any(a.value in self.indices for a in original_node.args):
            updated_node = self._index_arguments(original_node, updated_node)
        if attribute_name(original_node) == "format" and self._is_template(
            original_node.func.value
        ):
            return self._format_call(original_node, updated_node)
        if self.callee(original_node) != "torch.device":
            return updated_node
        # torch.device(_DEVICE().type) -> _DEVICE()
        found = device_arguments(updated_node)
        if found is not None and found[0] in self.device_types and found[1] is None:
            return self.device()
        # torch.device("cuda", i) and torch.device("cuda:0"): an index of the device,
        # and the CPU itself without one (torch.device("cpu", 0) is not the CPU's).
        index = index_of(original_node, updated_node, self.device_types)
        if index is not None:  # behind the guard: a guarded index is its first value
            index = without_guards(index, self.context.device_name)
            return self.expr(self._indexed_device(), index=index)
        return updated_node

    def leave_Comparison(self, original_node, updated_node):
        if self.kinds.get(original_node, (None,))[0] is not Kind.STRING:
            return updated_node
        if not self.record_and_decide(original_node, "TP104"):
            return updated_node
        target = updated_node.comparisons[0]
        literal_left = device_literal(original_node.left) == "cuda"
        subject = target.comparator if literal_left else updated_node.left
        operator = self.membership.get(original_node, type(target.operator))
        if self.in_accelerated_branch():
            plain = self.expr(ACCELERATOR_COMPARISONS[operator], subject=subject)
            return plain.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)
        return self.expr(COMPARISONS[operator], subject=subject)
