"""The module-level device binding.

A module that needs the device gets one binding right after its imports::

    DEVICE = torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")

``plan_binding`` runs before the passes and picks the name the passes emit: a binding
torchport wrote before (so a second run changes nothing), an unambiguous device
variable of the user's own, or a fresh name that shadows nothing.
``insert_binding`` runs after the passes, only when some pass used the device.
"""

from __future__ import annotations

from typing import Iterable, Optional, Set

import libcst as cst
import libcst.matchers as m
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import MetadataWrapper, QualifiedNameProvider, ScopeProvider

from codemod.passes.base import FileContext
from codemod.rules import TorchVersion

# check_available=True matters: a CUDA wheel on a GPU-less host reports "cuda" otherwise.
BINDING_2_7 = '{torch}.accelerator.current_accelerator(check_available=True) or {torch}.device("cpu")'
BINDING_2_6 = (
    "{torch}.accelerator.current_accelerator() if {torch}.accelerator.is_available()"
    ' else {torch}.device("cpu")'
)


def binding_source(torch_name: str, target: TorchVersion) -> str:
    template = BINDING_2_7 if target >= (2, 7) else BINDING_2_6
    return template.format(torch=torch_name)


def _is_binding_value(value: cst.BaseExpression, torch_name: str) -> bool:
    code = cst.Module([]).code_for_node(value)
    normalized = "".join(code.split()).replace("'", '"')
    while normalized.startswith("(") and normalized.endswith(")"):
        normalized = normalized[1:-1]
    return normalized in {
        "".join(binding_source(torch_name, t).split()) for t in ((2, 6), (2, 7))
    }


def _single_target_assign(stmt: cst.CSTNode) -> Optional[cst.Assign]:
    if m.matches(
        stmt,
        m.SimpleStatementLine(
            body=[m.Assign(targets=[m.AssignTarget(target=m.Name())])]
        ),
    ):
        return stmt.body[0]  # type: ignore[attr-defined]
    return None


def _is_cuda_string(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.SimpleString) and node.evaluated_value == "cuda"


def _is_cpu_string(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.SimpleString) and node.evaluated_value == "cpu"


def _names_in(scopes) -> Set[str]:
    """Every name bound or read anywhere in the module, in any scope."""
    names: Set[str] = set()
    for scope in scopes:
        names.update(a.name for a in scope.assignments)
        names.update(
            a.node.value for a in scope.accesses if isinstance(a.node, cst.Name)
        )
    return names


def _torch_alias(module: cst.Module) -> Optional[str]:
    """The name a top-level ``import torch [as X]`` binds, if any."""
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if m.matches(alias.name, m.Name("torch")):
                        return alias.evaluated_alias or "torch"
    return None


class _UserDeviceVariable:
    """Recognizes ``device = torch.device("cuda" [if torch.cuda.is_available() else "cpu"])``."""

    def __init__(self, wrapper: MetadataWrapper) -> None:
        self.names = wrapper.resolve(QualifiedNameProvider)

    def _qualified(self, node: cst.CSTNode) -> Set[str]:
        names = self.names.get(node, ())
        if callable(names):  # QualifiedNameProvider computes its values lazily
            names = names()
        return {q.name for q in names}

    def _is_available(self, node: cst.CSTNode) -> bool:
        return isinstance(
            node, cst.Call
        ) and "torch.cuda.is_available" in self._qualified(node.func)

    def _device_call(self, node: cst.CSTNode, arg_test) -> bool:
        return (
            isinstance(node, cst.Call)
            and "torch.device" in self._qualified(node.func)
            and len(node.args) == 1
            and node.args[0].keyword is None
            and arg_test(node.args[0].value)
        )

    def matches(self, value: cst.BaseExpression) -> bool:
        if self._device_call(value, _is_cuda_string):
            return True
        # torch.device("cuda" if torch.cuda.is_available() else "cpu")
        if self._device_call(
            value,
            lambda a: isinstance(a, cst.IfExp)
            and _is_cuda_string(a.body)
            and _is_cpu_string(a.orelse)
            and self._is_available(a.test),
        ):
            return True
        # torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
        return (
            isinstance(value, cst.IfExp)
            and self._is_available(value.test)
            and self._device_call(value.body, _is_cuda_string)
            and self._device_call(value.orelse, _is_cpu_string)
        )


def plan_binding(wrapper: MetadataWrapper, context: FileContext) -> None:
    """Choose the names the passes will emit for torch and the device."""
    module = wrapper.module
    context.torch_name = _torch_alias(module) or "torch"
    context.binding_index = None  # a top-level statement to turn into the binding
    context.binding_exists = False
    if context.options.device_import and _plan_device_import(wrapper, context):
        return
    user_variable = _UserDeviceVariable(wrapper)
    candidates = []
    for index, stmt in enumerate(module.body):
        assign = _single_target_assign(stmt)
        if assign is None:
            continue
        name = assign.targets[0].target.value  # type: ignore[attr-defined]
        if _is_binding_value(assign.value, context.torch_name):
            context.device_name, context.binding_exists = name, True
            return
        if user_variable.matches(assign.value):
            candidates.append((index, name))
    scopes = {s for s in wrapper.resolve(ScopeProvider).values() if s is not None}
    for index, name in candidates:
        # Reuse only a name bound exactly once in the whole module.
        if sum(len(s.assignments[name]) for s in scopes) == 1:
            context.device_name, context.binding_index = name, index
            return
    context.device_name = _fresh_name(context.options.device_name, _names_in(scopes))


def _fresh_name(preferred: str, taken: Iterable[str]) -> str:
    taken = set(taken)
    for candidate in (preferred, f"ACCELERATOR_{preferred}", f"TORCHPORT_{preferred}"):
        if candidate not in taken:
            return candidate
    n = 2
    while f"{preferred}_{n}" in taken:
        n += 1
    return f"{preferred}_{n}"


def _plan_device_import(wrapper: MetadataWrapper, context: FileContext) -> bool:
    """Use the project's own device (``device-import``) instead of a binding.

    The imported name is aliased when the module already uses it for something
    else; False when the module defines that device itself (it is the module the
    import points at), which then gets the usual binding.
    """
    statement = cst.parse_statement(context.options.device_import)
    node = statement.body[0]  # type: ignore[attr-defined]
    source_module = cst.Module([]).code_for_node(node.module)
    name = node.names[0].evaluated_name
    bound = node.names[0].evaluated_alias or name
    scopes = {s for s in wrapper.resolve(ScopeProvider).values() if s is not None}
    existing = _existing_import(wrapper.module, source_module, name)
    if existing is not None:
        bound = existing
    elif any(scope.assignments[bound] for scope in scopes):
        user_variable = _UserDeviceVariable(wrapper)
        for stmt in wrapper.module.body:
            assign = _single_target_assign(stmt)
            if (
                assign is not None
                and assign.targets[0].target.value == bound  # type: ignore[attr-defined]
                and (
                    _is_binding_value(assign.value, context.torch_name)
                    or user_variable.matches(assign.value)
                )
            ):
                return False
        bound = _fresh_name(bound, _names_in(scopes))
    context.device_name = bound
    alias = f" as {bound}" if bound != name else ""
    context.device_import = f"from {source_module} import {name}{alias}"
    context.binding_exists = True
    return True


def _existing_import(
    module: cst.Module, source_module: str, name: str
) -> Optional[str]:
    """The name a top-level ``from SOURCE_MODULE import NAME [as X]`` binds, if any."""
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if (
                isinstance(small, cst.ImportFrom)
                and not small.relative
                and small.module is not None
                and cst.Module([]).code_for_node(small.module) == source_module
                and not isinstance(small.names, cst.ImportStar)
            ):
                for alias in small.names:
                    if alias.evaluated_name == name:
                        return alias.evaluated_alias or name
    return None


def _is_import(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


def _uses(stmt: cst.CSTNode, name: str) -> bool:
    return bool(m.findall(stmt, m.Name(name)))


def binding_statement(context: FileContext, newline: str = "\n") -> str:
    """The binding as torchport writes it: parenthesized, so it fits in 88 columns."""
    value = binding_source(context.torch_name, context.options.target_torch)
    return f"{context.device_name} = ({newline}    {value}{newline}){newline}"


def insert_binding(module: cst.Module, context: FileContext) -> cst.Module:
    """Add ``import torch`` and the binding when a pass used them."""
    if context.device_import:
        if context.needs_device:
            module = _add_statement_import(module, context.device_import)
        context.needs_device = False  # the imported name is the binding
    wants_binding = context.needs_device and not context.binding_exists
    binding = cst.parse_statement(
        binding_statement(context, module.default_newline),
        config=module.config_for_parsing,
    )
    if wants_binding and context.binding_index is not None:
        # The user's own device variable becomes the binding, keeping its comments.
        body = list(module.body)
        old = body[context.binding_index]
        body[context.binding_index] = binding.with_changes(
            leading_lines=old.leading_lines, trailing_whitespace=old.trailing_whitespace
        )
        module = module.with_changes(body=body)
    if (wants_binding or context.needs_torch) and _torch_alias(module) is None:
        codemod_context = CodemodContext()
        AddImportsVisitor.add_needed_import(codemod_context, "torch")
        module = AddImportsVisitor(codemod_context).transform_module(module)
    if not wants_binding or context.binding_index is not None:
        return module
    body = list(module.body)
    name = context.device_name
    first_use = next((i for i, s in enumerate(body) if _uses(s, name)), len(body))
    torch_import = max(
        (
            i
            for i, s in enumerate(body)
            if _is_import(s) and _torch_alias(cst.Module([s]))
        ),
        default=-1,
    )
    last_import = max(
        (i for i, s in enumerate(body[:first_use]) if _is_import(s)), default=-1
    )
    at = max(last_import, torch_import) + 1
    if at > 0:
        # One blank line between the import block and the binding, and after it.
        binding = binding.with_changes(leading_lines=[cst.EmptyLine()])
        if at < len(body) and not body[at].leading_lines:
            body[at] = body[at].with_changes(leading_lines=[cst.EmptyLine()])
    body.insert(at, binding)
    return module.with_changes(body=body)


def _add_statement_import(module: cst.Module, statement: str) -> cst.Module:
    node = cst.parse_statement(statement).body[0]
    codemod_context = CodemodContext()
    for alias in node.names:  # type: ignore[union-attr]
        AddImportsVisitor.add_needed_import(
            codemod_context,
            cst.Module([]).code_for_node(node.module),  # type: ignore[arg-type]
            alias.evaluated_name,
            alias.evaluated_alias,
        )
    return AddImportsVisitor(codemod_context).transform_module(module)
