"""TP2xx: tensor and module methods that name CUDA: ``.cuda()``, ``.is_cuda``, pinning."""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from codemod import catalog
from codemod.passes.base import Pass, attribute_name
from codemod.passes.device_positions import is_index_value
from codemod.passes.guards import AcceleratedBranches, and_operands
from codemod.passes.names import dotted_name
from codemod.rules.tensor_methods import RULES
from codemod.model.rule import Fix

# Tensor factories that take pin_memory= (DataLoader only warns, so it is left alone).
PINNING_FACTORIES = {
    f"torch.{name}"
    for name in (
        "empty empty_like empty_strided zeros zeros_like ones ones_like full full_like "
        "rand rand_like randn randn_like randint randint_like arange range linspace "
        "logspace eye tensor as_tensor"
    ).split()
}


INDEX_ARGUMENT = "`.cuda(i)` with a variable index: assumed to be an int"
DEVICE_ARGUMENT = (
    "`.cuda(x.device)`: assumed to be a device, not None (which `.cuda()` takes as "
    "the current device and `.to()` as no move)"
)

# Types with `.is_cuda` but no `.device` (torch.nn.utils.rnn): a module that uses
# them may read `.is_cuda` of one.
NO_DEVICE_TYPES = ("PackedSequence", "pack_padded_sequence", "pack_sequence")
PACKED = (
    "`.is_cuda` in a module that uses PackedSequence, which has no `.device`: for a "
    'tensor use `x.device.type == _DEVICE().type != "cpu"`, for a PackedSequence '
    "`x.data.device.type`"
)


def _snake_case(name: str) -> str:
    """``SimpleCustomBatch`` -> ``simple_custom_batch``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _is_zero(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Integer) and value.evaluated_value == 0


def _non_blocking_named(args: List[cst.Arg]) -> List[cst.Arg]:
    """``.cuda(0, True)`` -> ``.cuda(0, non_blocking=True)``: ``cuda(device,
    non_blocking)`` takes it second, where ``.to()`` takes a dtype."""
    positional = [a for a in args if a.keyword is None]
    if len(positional) != 2:
        return args
    second = positional[1]
    named = second.with_changes(
        keyword=cst.Name("non_blocking"),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""),
            whitespace_after=cst.SimpleWhitespace(""),
        ),
    )
    return [named if a is second else a for a in args]


def _is_cuda_operands(test: cst.BaseExpression) -> List[cst.Attribute]:
    """The ``x.is_cuda`` operands of a test (an ``and`` chain)."""
    return [
        o
        for o in and_operands(test)
        if isinstance(o, cst.Attribute) and o.attr.value == "is_cuda"
    ]


class TensorMethods(AcceleratedBranches, Pass):
    RULES = RULES
    TRIGGER = catalog.trigger_of("tensor_methods")
    # Pinning needs no guard in a branch that needs an accelerator: the pass sees
    # the branch around it (on a second run no other site is on its lines).
    FUNCTION_CONTEXT = re.compile(r"\.pin_memory\(|pin_memory\s*=\s*True")

    def __init__(self, context) -> None:
        super().__init__(context)
        # A module that defines its own `cuda` method: `.cuda()` may not be torch's.
        self.own_cuda = "cuda" in context.facts.functions
        self.guarded: Set[cst.CSTNode] = set()
        # Names that hold a storage: `map_location=lambda storage, loc: ...`.
        self.storages: Set[str] = set()
        # `self.is_cuda = ...` somewhere: `.is_cuda` reads may be that attribute.
        self.own_is_cuda = "is_cuda" in context.facts.stored_attributes
        self.stores: Set[cst.CSTNode] = set()
        # `return Batch(x).pin_memory()`: pin call -> its statement; the receiver is
        # bound to a name on the line before (receiver node, name) when fixed.
        self.hoistable: Dict[cst.CSTNode, cst.CSTNode] = {}
        self.bindings: Dict[cst.CSTNode, Tuple[str, cst.BaseExpression]] = {}
        self.packed = any(n in context.facts.identifiers for n in NO_DEVICE_TYPES)
        # `.is_cuda` an assertion checks: the tensor is where the program computes.
        self.placements: Set[cst.CSTNode] = set()

    def visit_Assert(self, node: cst.Assert) -> None:
        self.placements.update(_is_cuda_operands(node.test))

    def visit_Arg(self, node: cst.Arg) -> None:
        value = node.value
        if (
            node.keyword is not None
            and node.keyword.value == "map_location"
            and isinstance(value, cst.Lambda)
            and value.params.params
        ):
            self.storages.add(value.params.params[0].name.value)

    def _bound_device(self, value) -> bool:
        """A name its scope binds once, to torch.device(...) (device_values)."""
        if not isinstance(value, cst.Name):
            return False
        return self.position(value) in self.context.device_objects

    def _is_storage(self, receiver: cst.BaseExpression) -> bool:
        if isinstance(receiver, cst.Call):  # `t.untyped_storage().cuda()`
            receiver = receiver.func
        name = receiver.attr if isinstance(receiver, cst.Attribute) else receiver
        return isinstance(name, cst.Name) and (
            name.value in self.storages or "storage" in name.value.lower()
        )

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.stores.add(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.stores.add(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.stores.add(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self.stores.add(node.target)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if len(node.body) != 1:
            return
        statement = node.body[0]
        value = getattr(statement, "value", None)
        if isinstance(statement, cst.Assign) and len(statement.targets) != 1:
            return
        if (
            isinstance(statement, (cst.Return, cst.Assign, cst.Expr))
            and isinstance(value, cst.Call)
            and attribute_name(value) == "pin_memory"
            and isinstance(value.func.value, cst.Call)  # type: ignore[attr-defined]
        ):
            self.hoistable[value] = node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        binding = next(
            (
                self.bindings.pop(call)
                for call, line in self.hoistable.items()
                if line is original_node and call in self.bindings
            ),
            None,
        )
        if binding is None:
            return updated_node
        name, receiver = binding
        assign = cst.SimpleStatementLine(
            body=[
                cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=receiver)
            ],
            leading_lines=updated_node.leading_lines,
        )
        return cst.FlattenSentinel(
            [assign, updated_node.with_changes(leading_lines=[])]
        )

    def _binding_name(self, receiver: cst.Call) -> Optional[str]:
        """A new name for the receiver, from its callee's last words in snake case
        (``SimpleCustomBatch(x)`` -> ``custom_batch``); None if every candidate is
        taken."""
        callee = receiver.func
        word = callee.attr if isinstance(callee, cst.Attribute) else callee
        if not isinstance(word, cst.Name):
            return None
        words = _snake_case(word.value).split("_")
        for count in (2, 1):
            name = "_".join(words[-count:])
            if name != word.value and name not in self.context.facts.identifiers:
                return name
        return None

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self.note_flag(node)
        # `x.pin_memory() if <guard> else x` is already guarded (by torchport or by hand).
        if (
            isinstance(node.body, cst.Call)
            and attribute_name(node.body) == "pin_memory"
        ):
            self.guarded.add(node.body)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        func = updated_node.func
        if attribute_name(func) == "cuda":
            return self._cuda_call(original_node, updated_node)
        if self.in_accelerated_branch():
            return updated_node  # pinning works where an accelerator is: no site
        if (
            attribute_name(func) == "pin_memory"
            and not updated_node.args
            and original_node not in self.guarded
        ):
            return self._pin_call(original_node, updated_node)
        if self.callee(original_node) in PINNING_FACTORIES:
            return self._pin_keyword(original_node, updated_node)
        self._passed_on(original_node)
        return updated_node

    def _passed_on(self, call: cst.Call) -> None:
        """``ShardedDataset(..., pin_memory=True)``: what it pins is not in view."""
        callee = self.callee(call) or dotted_name(call.func) or ""
        if callee.endswith("DataLoader"):
            return
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "pin_memory":
                if isinstance(arg.value, cst.Name) and arg.value.value == "True":
                    self.report(arg, "TP204")

    def _cuda_call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.qualified_name(original.func) and self.callee(original).startswith(
            "torch.cuda"
        ):
            return updated  # torch.cuda itself, not a method: the runtime pass's job
        if self.own_cuda:
            self.report(
                original,
                "TP201",
                "`.cuda()` in a module that defines its own "
                "`cuda` method: check the receiver, then use `.to(_DEVICE())`",
            )
            return updated
        if any(a.star for a in updated.args):
            self.report(original, "TP201")
            return updated
        args = _non_blocking_named(list(updated.args))
        index = [a for a in args if a.keyword is None or a.keyword.value == "device"]
        rest = [a for a in args if a not in index]
        if len(index) > 1:
            self.report(original, "TP201")
            return updated
        value = index[0].value if index else None
        bound = self._bound_device(original.args[0].value) if index else False
        literal = not index or bound or is_index_value(value, self.context.int_options)
        # `.cuda(x.device)`: a device, which `.to()` takes as it is (but for None).
        device = (
            bound or isinstance(value, cst.Attribute) and value.attr.value == "device"
        )
        message = "" if literal else (DEVICE_ARGUMENT if device else INDEX_ARGUMENT)
        if not self.record_and_decide(
            original, "TP201", message, None if literal else Fix.UNSAFE
        ):
            return updated
        storage = self._is_storage(updated.func.value)  # type: ignore[attr-defined]
        # A storage's .cuda(0) goes to the current device (torch/storage.py).
        if device:
            target = index[0].value
        elif index and not (storage and _is_zero(index[0].value)):
            target = self.expr(
                "{torch}.device({device}.type, {index})", index=index[0].value
            )
        else:
            target = self.device()
        # Storage.to(*, device, non_blocking) takes keywords only.
        first = cst.Arg(target)
        if storage:
            no_space = cst.SimpleWhitespace("")
            first = first.with_changes(
                keyword=cst.Name("device"),
                equal=cst.AssignEqual(
                    whitespace_before=no_space, whitespace_after=no_space
                ),
            )
        args = [first] + [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in rest]
        args = [
            (
                a.with_changes(
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                )
                if i < len(args) - 1
                else a.with_changes(comma=cst.MaybeSentinel.DEFAULT)
            )
            for i, a in enumerate(args)
        ]
        return updated.with_changes(
            func=updated.func.with_changes(attr=cst.Name("to")), args=args
        )

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ):
        if updated_node.attr.value != "is_cuda" or original_node in self.stores:
            return updated_node
        if self.own_is_cuda:
            self.report(
                original_node,
                "TP202",
                "`.is_cuda` is also assigned in this "
                "module: if this is a tensor's, use `x.device.type == _DEVICE().type`",
            )
            return updated_node
        if self.packed:
            self.report(original_node, "TP202", PACKED)
            return updated_node
        if not self.record_and_decide(original_node, "TP202"):
            return updated_node
        if original_node in self.placements or self.in_accelerated_branch():
            return self.expr(
                "{receiver}.device.type == {device}.type",
                receiver=updated_node.value,
            )
        return self.expr(
            '({receiver}.device.type == {device}.type != "cpu")',
            receiver=updated_node.value,
        )

    def _pin_call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        # Only one branch of the conditional runs, so the receiver is still evaluated
        # once, whatever it is.
        if not self.record_and_decide(original, "TP203"):
            return updated
        receiver = updated.func.value  # type: ignore[attr-defined]
        source = original.func.value  # type: ignore[attr-defined]
        if (
            isinstance(source, cst.Call)
            and self.callee(source) in PINNING_FACTORIES
            and not any(a.star or a.keyword for a in source.args)
        ):
            # torch.randn(2).pin_memory() -> torch.randn(2, pin_memory=...): the
            # factory pins what it makes.
            return receiver.with_changes(
                args=(
                    [
                        *receiver.args[:-1],
                        receiver.args[-1].with_changes(
                            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                        ),
                        cst.Arg(
                            self.expr('{device}.type != "cpu"'),
                            keyword=cst.Name("pin_memory"),
                            equal=cst.AssignEqual(
                                whitespace_before=cst.SimpleWhitespace(""),
                                whitespace_after=cst.SimpleWhitespace(""),
                            ),
                        ),
                    ]
                    if receiver.args
                    else [
                        cst.Arg(
                            self.expr('{device}.type != "cpu"'),
                            keyword=cst.Name("pin_memory"),
                        )
                    ]
                )
            )
        name = self._binding_name(source) if original in self.hoistable else None
        if name is not None:
            self.bindings[original] = (name, receiver)
            receiver = cst.Name(name)
            updated = updated.with_changes(
                func=updated.func.with_changes(value=cst.Name(name))
            )
        return self.expr(
            '({call} if {device}.type != "cpu" else {receiver})',
            call=updated,
            receiver=receiver.deep_clone(),
        )

    def _pin_keyword(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        for position, arg in enumerate(original.args):
            if (
                arg.keyword is not None
                and arg.keyword.value == "pin_memory"
                and isinstance(arg.value, cst.Name)
                and arg.value.value == "True"
            ):
                if not self.record_and_decide(arg, "TP203"):
                    return updated
                args = list(updated.args)
                args[position] = args[position].with_changes(
                    value=self.expr('{device}.type != "cpu"')
                )
                return updated.with_changes(args=args)
        return updated
