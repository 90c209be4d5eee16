"""Which name the passes emit for the device, chosen before they run.

A binding torchport wrote before (so a second run changes nothing), an unambiguous
device variable of the user's own (which then becomes the binding, if it is bound
before every statement that will read it), the project's own device
(``device-import``), or a fresh name that shadows nothing.
"""

from __future__ import annotations

import ast
from typing import Iterator, Optional, Sequence, Tuple

from codemod.model.versions import ACCELERATOR_TORCH
from codemod.passes.base import FileContext
from codemod.rewrite.device.cache import is_cache_decorator
from codemod.rewrite.device.optional import (
    functions,
    lazy_torch_name,
    optional_branch,
    optional_torch_import,
    torch_bound,
)
from codemod.rewrite.device.text import (
    FORK_SAFE_TORCH,
    DeviceImport,
    accessor_lines,
)
from codemod.model.lines import Spans
from codemod.rewrite.device.floor import keeps_cuda_tests
from codemod.rewrite.device.fresh import fresh_name as _fresh_name
from codemod.rewrite.device.fresh import module_names as _names
from codemod.rewrite.device.fresh import star_brought
from codemod.rewrite.device.timing import early_reads, lambda_bodies
from codemod.passes.names import ModuleFacts


def _is_str(node: ast.AST, value: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == value


def _is_available(node: ast.AST, facts: ModuleFacts) -> bool:
    return (
        isinstance(node, ast.Call)
        and facts.qualified_name(node.func) == "torch.cuda.is_available"
    )


def _device_call(node: ast.AST, facts: ModuleFacts, arg_test) -> bool:
    return (
        isinstance(node, ast.Call)
        and facts.qualified_name(node.func) == "torch.device"
        and len(node.args) == 1
        and not node.keywords
        and arg_test(node.args[0])
    )


def is_user_device(value: ast.AST, facts: ModuleFacts) -> bool:
    """``torch.device("cuda" [if torch.cuda.is_available() else "cpu"])`` and the
    ``torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")`` form.
    """
    cuda = lambda a: _is_str(a, "cuda")  # noqa: E731
    cpu = lambda a: _is_str(a, "cpu")  # noqa: E731
    if _device_call(value, facts, cuda):
        return True
    if _device_call(
        value,
        facts,
        lambda a: isinstance(a, ast.IfExp)
        and cuda(a.body)
        and cpu(a.orelse)
        and _is_available(a.test, facts),
    ):
        return True
    return (
        isinstance(value, ast.IfExp)
        and _is_available(value.test, facts)
        and _device_call(value.body, facts, cuda)
        and _device_call(value.orelse, facts, cpu)
    )


def _stores(tree: ast.Module, name: str) -> int:
    count = 0
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and node.id == name
            and not isinstance(node.ctx, ast.Load)
        ):
            count += 1
        elif isinstance(node, ast.arg) and node.arg == name:
            count += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            count += node.name == name
    return count


def is_binding(value: ast.AST, facts: ModuleFacts) -> bool:
    """A form of the binding torchport writes (BINDING_2_8, BINDING_2_7, BINDING_2_6,
    BINDING_ADAPTIVE)."""
    cpu = lambda a: _is_str(a, "cpu")  # noqa: E731
    current = "torch.accelerator.current_accelerator"
    if (
        isinstance(value, ast.BoolOp)
        and isinstance(value.op, ast.Or)
        and len(value.values) == 2
    ):
        first, second = value.values
        return (
            isinstance(first, ast.Call)
            and facts.qualified_name(first.func) == current
            and not first.args
            and [(k.arg, getattr(k.value, "value", None)) for k in first.keywords]
            == [("check_available", True)]
            and _device_call(second, facts, cpu)
        )
    if not isinstance(value, ast.IfExp):
        return False
    test, adaptive = value.test, False
    if (
        isinstance(test, ast.BoolOp)
        and isinstance(test.op, ast.And)
        and len(test.values) == 2
        and _has_accelerator(test.values[0], facts)
    ):
        test, adaptive = test.values[1], True
    fallback = value.orelse
    return (
        _accelerator_test(test, facts)
        and isinstance(value.body, ast.Call)
        and facts.qualified_name(value.body.func) == current
        and not value.body.args
        and not value.body.keywords
        and (
            is_user_device(fallback, facts)
            if adaptive
            else _device_call(fallback, facts, cpu)
        )
    )


def _has_accelerator(test: ast.AST, facts: ModuleFacts) -> bool:
    """``hasattr(torch, "accelerator")``: the adaptive binding's test of the torch it
    runs on."""
    return (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "hasattr"
        and len(test.args) == 2
        and facts.qualified_name(test.args[0]) == "torch"
        and _is_str(test.args[1], "accelerator")
    )


def _accelerator_test(test: ast.AST, facts: ModuleFacts) -> bool:
    """``torch.accelerator.is_available()`` or ``torch.accelerator.device_count() > 0``."""
    if isinstance(test, ast.Compare):
        if not (
            len(test.ops) == 1
            and isinstance(test.ops[0], ast.Gt)
            and _is_int(test.comparators[0], 0)
        ):
            return False
        test, wanted = test.left, "torch.accelerator.device_count"
    else:
        wanted = "torch.accelerator.is_available"
    return (
        isinstance(test, ast.Call)
        and not test.args
        and not test.keywords
        and facts.qualified_name(test.func) == wanted
    )


def _is_int(node: ast.AST, value: int) -> bool:
    return (
        isinstance(node, ast.Constant)
        and type(node.value) is int
        and node.value == value
    )


def _assignments(body: Sequence[ast.stmt]) -> Iterator[Tuple[int, str, ast.stmt]]:
    """(index, name, statement) of each ``name = value`` in ``body``."""
    for index, stmt in enumerate(body):
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            yield index, stmt.targets[0].id, stmt


def plan_binding(
    tree: ast.Module, facts: ModuleFacts, context: FileContext, reuse: bool = True
) -> None:
    """Choose the names the passes will emit for torch and the device.

    ``reuse=False``: a fresh binding, because the module's own device variable is
    not bound everywhere the rewrite would use it (see ``bound_before_uses``).
    """
    context.torch_name = facts.torch_alias or lazy_torch_name(tree) or "torch"
    context.torch_bound = torch_bound(tree)
    initialising = context.options.target_torch < FORK_SAFE_TORCH
    context.early_reads = Spans(early_reads(tree, facts, initialising))
    context.binding_spans = list(_written_spans(tree, context))
    context.cuda_binding = context.options.target_torch < ACCELERATOR_TORCH and (
        keeps_cuda_tests(tree, facts)
    )
    if context.early_reads and "lambda" in context.source:
        context.lazy_regions = lambda_bodies(tree, context.source.splitlines())
    if context.options.device_import and _plan_device_import(tree, facts, context):
        return
    candidates = []
    for index, name, stmt in _assignments(tree.body):
        if is_binding(stmt.value, facts) and reuse:
            context.device_name, context.binding_exists = name, True
            context.binding_line = stmt.lineno
            return
        if (
            reuse
            and is_user_device(stmt.value, facts)
            and not context.suppressed(stmt.lineno, "TP1")
            # Its own statement becomes the binding: exact only where it asked for
            # CUDA itself, or the moment changes nothing.
            and stmt.lineno not in context.early_reads
        ):
            candidates.append((index, name))
    accessor = next((s for s in tree.body if is_accessor(s, context)), None)
    if accessor is not None and reuse:
        _use_accessor(context, accessor)
        return
    for index, name in candidates:
        if _stores(tree, name) == 1:  # bound once in the whole module: unambiguous
            context.device_name, context.binding_index = name, index
            context.binding_line = tree.body[index].lineno
            return
    for name, stmt, inside in _nested_bindings(tree, context) if reuse else ():
        context.device_call = isinstance(stmt, ast.FunctionDef)
        if inside is None:  # in `try: import torch`: the module's binding
            context.device_name, context.binding_exists = name, True
            context.binding_line = stmt.lineno
            return
        context.device_name = name  # lazy torch: each function has its own binding
        return
    context.device_name = _fresh_name(
        context.options.device_name, tree, facts, star_brought(tree, context)
    )
    context.device_call = True


def _use_accessor(context: FileContext, accessor: ast.FunctionDef) -> None:
    context.device_name, context.binding_exists = accessor.name, True
    context.device_call = True
    context.binding_line = _span(accessor)[0]


def _span(stmt: ast.stmt) -> Tuple[int, int]:
    """A statement's first and last lines, its decorators included."""
    decorators = getattr(stmt, "decorator_list", [])
    first = min([stmt.lineno] + [d.lineno for d in decorators])
    return first, stmt.end_lineno or stmt.lineno


def _written_spans(tree: ast.Module, context: FileContext):
    """The lines of every binding and accessor torchport wrote: their bodies are
    torchport's (below 2.6 they hold CUDA's own availability check)."""
    for _, _, assign in _assignments(tree.body):
        if is_binding(assign.value, context.facts):
            yield _span(assign)
    for stmt in tree.body:
        if is_accessor(stmt, context):
            yield _span(stmt)
    for _, stmt, _ in _nested_bindings(tree, context):
        yield _span(stmt)


def is_accessor(stmt: ast.stmt, context: FileContext) -> bool:
    """Whether ``stmt`` is the accessor torchport writes (any target's form, with
    any of the cache decorators it writes, or none)."""
    if not isinstance(stmt, ast.FunctionDef) or stmt.args.args or stmt.args.vararg:
        return False
    decorators = stmt.decorator_list
    if len(decorators) > 1 or not all(is_cache_decorator(d) for d in decorators):
        return False
    # ast.unparse writes each decorator on a line of its own, before the def.
    written = ast.unparse(stmt).split("\n", len(decorators))[-1]
    # the bodies' forms: 2.8's, 2.6's, the adaptive one and the older CUDA one
    for target, legacy in (
        ((2, 8), False),
        ((2, 6), False),
        ((2, 4), False),
        ((2, 4), True),
    ):
        lines = accessor_lines(stmt.name, context.torch_name, "", target, legacy)
        if ast.unparse(ast.parse("\n".join(lines))) == written:
            return True
    return False


def _nested_bindings(tree: ast.Module, context: FileContext):
    """Bindings torchport wrote where torch is bound other than at the top level:
    (name, statement, None) in a block that imports torch (``try: import torch``,
    ``if is_torch_available():``), (name, statement, function) in a function that
    imports torch; an accessor or an assignment."""
    optional = optional_torch_import(tree)
    if optional is not None:
        for name, binding in _bindings_in(optional_branch(tree, optional), context):
            yield name, binding, None
    for function in functions(tree):
        for name, binding in _bindings_in(function.body, context):
            yield name, binding, function


def _bindings_in(body: Sequence[ast.stmt], context: FileContext):
    for _, name, assign in _assignments(body):
        if is_binding(assign.value, context.facts):
            yield name, assign
    for stmt in body:
        if is_accessor(stmt, context):
            yield stmt.name, stmt


def _plan_device_import(
    tree: ast.Module, facts: ModuleFacts, context: FileContext
) -> bool:
    """Use the project's own device (``device-import``) instead of a binding.

    An import the module already has is reused under its name; the imported name
    is aliased when the module uses it for something else. False when the module
    defines that device itself (it is the module the import points at): it then
    gets the usual binding.
    """
    device_import = DeviceImport.parse(context.options.device_import)
    source, name = device_import.module, device_import.name
    bound = _existing_import(tree, source, name)
    if bound is None:
        bound = device_import.bound
        if bound in facts.identifiers and bound in _names(tree):
            for _, target, stmt in _assignments(tree.body):
                if target == bound and (
                    is_binding(stmt.value, facts) or is_user_device(stmt.value, facts)
                ):
                    return False
            if any(is_accessor(s, context) and s.name == bound for s in tree.body):
                return False  # the module that defines the project's accessor
            bound = _fresh_name(bound, tree, facts)
    context.device_name = bound
    context.device_import = device_import.statement(bound)
    context.binding_exists = True
    context.device_call = context.options.device_import_call
    return True


def _existing_import(tree: ast.Module, source: str, name: str) -> Optional[str]:
    """The name a top-level ``from SOURCE import NAME [as X]`` binds, if any."""
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.ImportFrom)
            and stmt.module == source
            and not stmt.level
        ):
            for alias in stmt.names:
                if alias.name == name:
                    return alias.asname or name
    return None
