"""TP4xx: automatic mixed precision written against ``torch.cuda.amp``.

``torch.cuda.amp.autocast``, ``GradScaler``, ``custom_fwd`` and ``custom_bwd`` only
know CUDA (and are deprecated since torch 2.4). Each becomes its device-generic
``torch.autocast`` / ``torch.amp`` counterpart with the device type passed in, and
every original argument keeps its meaning. The mapping is the table ``MAPPINGS``.
Imports from ``torch.cuda.amp`` whose every use was rewritten are removed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Set, Tuple, Union

import libcst as cst

from codemod import catalog
from codemod.catalog.amp import AMP_DEVICE_TYPE
from codemod.passes.amp_forms import device_type_template
from codemod.passes.base import Pass
from codemod.passes.guards import AcceleratedBranches
from codemod.rules.amp import RULES


@dataclass(frozen=True)
class Mapping:
    """How one old AMP callable becomes its device-generic counterpart (the rule and
    the new callee are its catalogue row's)."""

    device: str  # the device argument, a template
    device_keyword: Optional[str] = None  # pass the device by this keyword
    # The old positional parameters, when the new callable orders them differently:
    # positional arguments then become these keywords.
    positional: Optional[Tuple[str, ...]] = None
    # A generic callable whose first parameter, of this name, is the device and
    # defaults to CUDA: only calls that leave it out are sites.
    device_parameter: Optional[str] = None
    # ...whose CUDA form takes this many positional arguments (the device left out).
    cuda_arity: int = 0
    decorator: bool = False  # may be used as a bare decorator (@custom_fwd)
    code: str = ""  # from the row
    target: Optional[str] = None  # the new callee, a template (None: keep the callee)


AUTOCAST_ARGS = ("enabled", "dtype", "cache_enabled")
# The accelerator's type, else CUDA's as the original's (codemod.passes.amp_forms).
_AMP = AMP_DEVICE_TYPE
_CUSTOM = Mapping(_AMP, "device_type", decorator=True)
# Catalogue row (its first name) -> how its calls are rewritten.
SHAPES: Dict[str, Mapping] = {
    "torch.cuda.amp.autocast": Mapping(_AMP, None, AUTOCAST_ARGS),
    "torch.cuda.amp.GradScaler": Mapping(_AMP),
    "torch.cuda.amp.custom_fwd": _CUSTOM,
    "torch.cuda.amp.custom_bwd": _CUSTOM,
    "torch.get_autocast_gpu_dtype": Mapping(_AMP),
    "torch.is_autocast_enabled": Mapping(_AMP, device_parameter="device_type"),
    "torch.set_autocast_gpu_dtype": Mapping(_AMP),
    "torch.set_autocast_enabled": Mapping(
        _AMP, device_parameter="device_type", cuda_arity=1
    ),
    "torch.cpu.amp.autocast": Mapping('"cpu"', None, AUTOCAST_ARGS),
    "torch.cpu.amp.GradScaler": Mapping('"cpu"'),
    "torch.amp.GradScaler": Mapping(_AMP, device_parameter="device"),
}
# Qualified name (every alias) -> mapping.
MAPPINGS: Dict[str, Mapping] = {
    name: replace(SHAPES[row.name], code=row.code, target=row.portable)
    for row in catalog.rows_of("amp")
    if row.kind == "name"
    for name in row.names
}
# Generic names: not reported when merely referenced.
GENERIC = {name for name, mapping in MAPPINGS.items() if mapping.device_parameter}
AMP_MODULES = tuple(r.name for r in catalog.rows_of("amp") if r.kind == "module")


def _is_amp_name(name: Optional[str]) -> bool:
    return bool(name) and (
        name in MAPPINGS
        or any(name == m or name.startswith(m + ".") for m in AMP_MODULES)
    )


def _leaves_out_device(mapping: Mapping, call: cst.Call) -> bool:
    """False for a generic callable already given its device (or maybe given it)."""
    if mapping.device_parameter is None:
        return True
    if any(
        a.star
        or (a.keyword is not None and a.keyword.value == mapping.device_parameter)
        for a in call.args
    ):
        return False  # given by keyword, or maybe by unpacking
    return sum(a.keyword is None for a in call.args) == mapping.cuda_arity


_NO_SPACE = cst.SimpleWhitespace("")
UNCALLED = (
    "`{name}` used without being called: "
    "replace it by hand with its `torch.amp` counterpart"
)
CALLED = (
    "`{name}(...)` has no `torch.amp` counterpart torchport knows: replace the "
    "call by hand (`torch.autocast`/`torch.amp` with `_DEVICE().type`)"
)


def _keyword(name: str, value: cst.BaseExpression, comma) -> cst.Arg:
    return cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=_NO_SPACE, whitespace_after=_NO_SPACE),
        comma=comma,
    )


class Amp(AcceleratedBranches, Pass):
    RULES = RULES
    TRIGGER = catalog.trigger_of("amp")

    def __init__(self, context) -> None:
        super().__init__(context)
        self.handled: Set[cst.CSTNode] = set()  # callees and decorators seen whole
        self.called: Set[cst.CSTNode] = set()  # callees no mapping rewrites
        self.decorator_calls: Set[cst.CSTNode] = set()  # run at import time
        self.function_depth = 0
        # A user's device variable (reused as the binding) may be assigned below code
        # that runs at import time.
        self.binding_line = 0 if context.options.device_import else context.binding_line

    def _count_rewritten(self, head: cst.BaseExpression) -> None:
        """A use of an imported amp name was rewritten: its import goes if nothing
        uses it once every pass has run (a user's dead import is never touched)."""
        while isinstance(head, cst.Attribute):
            head = head.value
        if not isinstance(head, cst.Name) or not _is_amp_name(
            self.qualified_name(head)
        ):
            return  # `torch` itself is never an import to remove
        form = self.context.facts.import_forms.get(head.value)
        if form is not None:
            self.drop_import_if_unused(*form)

    # -- names inside imports are not uses -------------------------------------
    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    # -- code that runs at import time ----------------------------------------
    def visit_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        self.function_depth += 1

    def leave_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        self.function_depth -= 1

    def _before_binding(self, node: cst.CSTNode) -> bool:
        """Run at import time above the (reused) device variable's assignment."""
        line, _ = self.position(node)
        return self.function_depth == 0 and line < self.binding_line

    # -- references that are neither called nor decorators --------------------
    def _reference(self, node: Union[cst.Name, cst.Attribute]) -> bool:
        if node in self.handled:
            return False
        name = self.qualified_name(node)
        if _is_amp_name(name) and name not in GENERIC:
            if node in self.called:
                message = CALLED.format(name=name)
            else:
                message = UNCALLED.format(name=name)
            self.report(node, "TP409", message)
            return False
        return True

    def visit_Name(self, node: cst.Name) -> bool:
        return self._reference(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self._reference(node)

    # -- calls and decorators -------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        if self.callee(node) in MAPPINGS:
            self.handled.add(node.func)
        else:
            self.called.add(node.func)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        self.decorator_calls.add(node.decorator)
        mapping = MAPPINGS.get(self.qualified_name(node.decorator) or "")
        if mapping is not None and mapping.decorator:
            self.handled.add(node.decorator)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        mapping = MAPPINGS.get(self.callee(original_node) or "")
        if mapping is None or not _leaves_out_device(mapping, original_node):
            return updated_node
        if not self._keeps_meaning(mapping, updated_node.args):
            self.report(
                original_node,
                "TP409",
                "`*args` cannot be matched to the "
                "new parameters: pass them by keyword, then run torchport",
            )
            return updated_node
        # custom_fwd/custom_bwd decorate a class's methods, whichever way written
        at_import = mapping.decorator or original_node in self.decorator_calls
        if not self._decide(original_node, mapping, at_import):
            return updated_node
        args = self._arguments(mapping, list(updated_node.args), at_import)
        if mapping.target is not None:
            self._count_rewritten(original_node.func)
            updated_node = updated_node.with_changes(func=self.expr(mapping.target))
        return updated_node.with_changes(args=args)

    def leave_Decorator(self, original_node: cst.Decorator, updated_node):
        expression = original_node.decorator
        if not isinstance(expression, (cst.Name, cst.Attribute)):
            return updated_node
        mapping = MAPPINGS.get(self.qualified_name(expression) or "")
        if mapping is None or not mapping.decorator:
            return updated_node
        if not self._decide(expression, mapping, at_import=True):
            return updated_node
        self._count_rewritten(expression)
        call = cst.Call(
            func=self.expr(mapping.target),
            args=self._arguments(mapping, [], at_import=True),
        )
        return updated_node.with_changes(decorator=call)

    def _device_template(self, mapping: Mapping, at_import: bool) -> str:
        """The device argument: a decorator's is read at import time."""
        if mapping.device != _AMP:
            return mapping.device
        target, accelerated = (
            self.context.options.target_torch,
            self.in_accelerated_branch(),
        )
        return device_type_template(at_import, target, accelerated)

    def _decide(self, node: cst.CSTNode, mapping: Mapping, at_import=False) -> bool:
        reads_device = "{device}" in self._device_template(mapping, at_import)
        if reads_device and self._before_binding(node):
            name = self.context.device_name
            self.report(
                node,
                mapping.code,
                f"runs at import time, before `{name}` "
                f"is assigned: move the `{name} = ...` line above it",
            )
            return False
        return self.record_and_decide(node, mapping.code, reads_device=reads_device)

    @staticmethod
    def _keeps_meaning(mapping: Mapping, args) -> bool:
        """Positional arguments can be named only when none is ``*args``."""
        if mapping.positional is None:
            return True
        positional = [a for a in args if a.keyword is None and a.star != "**"]
        return not any(a.star for a in positional) and len(positional) <= len(
            mapping.positional
        )

    def _arguments(
        self, mapping: Mapping, args: List[cst.Arg], at_import: bool = False
    ) -> List[cst.Arg]:
        """The new argument list: the device added, positional ones named if needed."""
        device = self.expr(self._device_template(mapping, at_import))
        positional = [a for a in args if a.keyword is None and a.star != "**"]
        keywords = [a for a in args if a not in positional]
        if mapping.positional is not None:
            positional = [
                _keyword(name, a.value, a.comma)
                for name, a in zip(mapping.positional, positional)
            ]
        rest = positional + keywords
        # The new argument takes the comma of the first old one: multi-line calls stay
        # one argument per line.
        first_comma = rest[0].comma if rest else cst.MaybeSentinel.DEFAULT
        comma = (
            first_comma
            if isinstance(first_comma, cst.Comma)
            else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        )
        if mapping.device_keyword is None:
            new = [cst.Arg(device, comma=comma if rest else cst.MaybeSentinel.DEFAULT)]
            result = new + rest
        else:
            at = len([a for a in rest if a.keyword is None and not a.star])
            keyword = _keyword(
                mapping.device_keyword, device, cst.MaybeSentinel.DEFAULT
            )
            result = rest[:at] + [keyword] + rest[at:]
        return _with_commas(result)


def _with_commas(args: List[cst.Arg]) -> List[cst.Arg]:
    """A comma after every argument but the last (which keeps its own, if any)."""
    fixed = []
    for position, arg in enumerate(args):
        last = position == len(args) - 1
        if not last and not isinstance(arg.comma, cst.Comma):
            arg = arg.with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            )
        fixed.append(arg)
    return fixed
