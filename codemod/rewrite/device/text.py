"""The device binding as text: the accessor torchport defines (``def _DEVICE():``),
the value by target torch, a reused variable's statement laid out as black would lay
it out, and the ``device-import`` line.

The accessor asks for the accelerator on first use and remembers the answer: a
module that defines it queries nothing at import. From torch 2.8 it asks without
initialising the accelerator: ``current_accelerator()`` is the build's answer and
``torch.accelerator.device_count()`` is the device module's count, which for CUDA
is NVML's and does not poison ``fork`` (torch documents it); CUDA then initialises
where the program first uses a device, as in the original. Before 2.8 the count
initialises CUDA (``current_accelerator(check_available=True)`` too): the accessor
then asks exactly where it is first called, and reads that would come earlier than
the original's first CUDA call are not rewritten by default (``timing``).

Kept free of libcst: configuration parses ``device-import`` at start-up.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, List, Optional

from codemod.model.versions import ACCELERATOR_TORCH
from codemod.model.rule import TorchVersion

if TYPE_CHECKING:  # pragma: no cover
    from codemod.passes.base import FileContext

# torch.accelerator.device_count() reaches the device module's count (NVML for
# CUDA) from torch 2.8 on; it is 0 without an accelerator.
FORK_SAFE_TORCH = (2, 8)
# The binding's value, by the oldest torch it runs on, as the operands black puts
# on lines of their own when the whole does not fit. From 2.8 the count asks NVML
# (for CUDA) without initialising it, as the accessor does; a reused eager variable
# still asks where it is assigned, so it is reused only where the original's import
# used CUDA itself (``timing``).
BINDING_2_8 = (
    "{torch}.accelerator.current_accelerator()",
    "if {torch}.accelerator.device_count() > 0",
    'else {torch}.device("cpu")',
)
# check_available=True matters: a CUDA wheel on a GPU-less host reports "cuda" otherwise.
BINDING_2_7 = (
    "{torch}.accelerator.current_accelerator(check_available=True)",
    'or {torch}.device("cpu")',
)
BINDING_2_6 = (
    "{torch}.accelerator.current_accelerator()",
    "if {torch}.accelerator.is_available()",
    'else {torch}.device("cpu")',
)
# Below 2.6 the binding adapts to the torch it runs on: the accelerator API where
# that torch has it (2.6's form), else the CUDA program's own device with the CPU
# fallback. Exact on CUDA on every release; any accelerator once torch is 2.6.
BINDING_ADAPTIVE = (
    "{torch}.accelerator.current_accelerator()",
    'if hasattr({torch}, "accelerator") and {torch}.accelerator.is_available()',
    'else {torch}.device("cuda" if {torch}.cuda.is_available() else "cpu")',
)
# Where the module keeps CUDA's own tests (an availability check, the "nccl"
# backend, which need 2.6 to port), the device must agree with them: CUDA's own.
BINDING_CUDA = ('{torch}.device("cuda" if {torch}.cuda.is_available() else "cpu")',)


def _binding_parts(
    torch_name: str, target: TorchVersion, legacy: bool = False
) -> List[str]:
    if target >= FORK_SAFE_TORCH:
        template = BINDING_2_8
    elif target >= (2, 7):
        template = BINDING_2_7
    elif target >= ACCELERATOR_TORCH:
        template = BINDING_2_6
    else:
        template = BINDING_CUDA if legacy else BINDING_ADAPTIVE
    return [part.format(torch=torch_name) for part in template]


def binding_value(context: "FileContext") -> str:
    """The binding's value on one line."""
    return " ".join(_binding_parts(*_form(context)))


def _form(context: "FileContext"):
    return context.torch_name, context.options.target_torch, context.cuda_binding


# The accessor's body by the oldest torch it runs on; {torch} is torch's name here.
# Each line fits a 60-column project, nested in a function too.
ACCESSOR_DOC = '"""The accelerator found on first use, else the CPU."""'
ACCESSOR_2_8 = (
    "if {torch}.accelerator.device_count() > 0:",
    "    return {torch}.accelerator.current_accelerator()",
    'return {torch}.device("cpu")',
)
# 2.6 and 2.7: current_accelerator() raises (2.6) or is the build's answer (2.7)
# without a device, and the count initialises CUDA: asked where first called.
ACCESSOR_2_6 = (
    "if {torch}.accelerator.is_available():",
    "    return {torch}.accelerator.current_accelerator()",
    'return {torch}.device("cpu")',
)
# Before torch.accelerator (2.6) nothing finds the device without naming a vendor,
# which torchport never does: the accessor asks the accelerator API where the torch
# it runs on has it (2.6's form), else CUDA's own check with the CPU fallback; the
# fallback is the `else` of the test of the torch it runs on, as in the binding.
ACCESSOR_ADAPTIVE = (
    'if hasattr({torch}, "accelerator") and {torch}.accelerator.is_available():',
    "    return {torch}.accelerator.current_accelerator()",
    "else:",
    '    return {torch}.device("cuda" if {torch}.cuda.is_available() else "cpu")',
)
# What torchport wrote below 2.6 before the accessor adapted: recognised, kept.
ACCESSOR_CUDA = (
    'return {torch}.device("cuda" if {torch}.cuda.is_available() else "cpu")',
)
ACCESSOR_DOC_CUDA = '"""The CUDA device found on first use, else the CPU."""'


def accessor_lines(
    device_name: str,
    torch_name: str,
    decorator: str,
    target: TorchVersion,
    legacy: bool = False,
) -> List[str]:
    """The accessor's lines, unindented, its body indented by four spaces;
    ``decorator``: its cache's expression (``codemod.rewrite.device.cache``), or "";
    ``legacy``: the CUDA-only form torchport wrote below 2.6 before it adapted."""
    doc = ACCESSOR_DOC
    if target >= FORK_SAFE_TORCH:
        body = ACCESSOR_2_8
    elif target >= ACCELERATOR_TORCH:
        body = ACCESSOR_2_6
    elif legacy:
        body, doc = ACCESSOR_CUDA, ACCESSOR_DOC_CUDA
    else:
        body = ACCESSOR_ADAPTIVE
    lines = [f"def {device_name}():", "    " + doc]
    lines += ["    " + line.format(torch=torch_name) for line in body]
    if decorator:
        lines.insert(0, "@" + decorator)
    return lines


def accessor_definition(
    context: "FileContext", newline: str = "\n", indent: str = ""
) -> str:
    """The accessor as torchport writes it at ``indent``, in the file's own
    indentation step."""
    lines = accessor_lines(
        context.device_name,
        context.torch_name,
        context.cache_decorator,
        context.options.target_torch,
        context.cuda_binding,
    )
    out = []
    for line in lines:
        stripped = line.lstrip(" ")
        depth = (len(line) - len(stripped)) // 4
        out.append(indent + context.indent_unit * depth + stripped + newline)
    return "".join(out)


def _width(line: str) -> int:
    return len(line.expandtabs(4))  # a tab counts as one indentation step


def _has_arguments(call: str) -> bool:
    return not call.endswith("()")


def binding_statement(
    context: "FileContext", newline: str = "\n", comment: str = "", indent: str = ""
) -> str:
    """The binding as torchport writes it, laid out as black would at ``indent``
    within the project's line length, whether or not black runs: parenthesized, one
    operand a line when the value does not fit on one; indented with the file's
    indentation step."""
    parts = _binding_parts(*_form(context))
    limit = context.options.line_length
    tail = f"  {comment}" if comment else ""
    head = f"{indent}{context.device_name} = "
    value = binding_value(context)
    if _width(head + value) <= limit:
        return f"{head}{value}{tail}{newline}"
    inner = indent + context.indent_unit
    if _width(inner + value) <= limit:
        parts = [value]
    elif _has_arguments(parts[0]) and any(_width(inner + p) > limit for p in parts):
        # Narrower still: black splits the first call's arguments instead.
        first, rest = parts[0], " ".join(parts[1:])
        opened = first.index("(") + 1
        arguments = f"{inner}{first[opened:-1]}{newline}"
        closing = f"{indent}) {rest}" if rest else f"{indent})"
        return f"{head}{first[:opened]}{newline}{arguments}{closing}{tail}{newline}"
    elif parts[1].startswith("if hasattr(") and any(
        _width(inner + p) > limit for p in parts
    ):
        parts = _narrow_adaptive(parts, inner + context.indent_unit, limit, newline)
    body = "".join(f"{inner}{part}{newline}" for part in parts)
    return f"{head}({newline}{body}{indent}){tail}{newline}"


def _narrow_adaptive(parts: List[str], inner: str, limit: int, newline: str):
    """The adaptive binding's operands as black splits them in a narrow project: the
    test at its ``and``, the fallback's argument on lines of its own (``inner``)."""
    test, fallback = parts[1], parts[2]
    ask = test.index(" and ")
    opened = fallback.index("(") + 1
    argument = fallback[opened:-1]
    if _width(inner + argument) > limit:  # "cuda" / if ... / else "cpu"
        cuda, rest = argument.split(" if ", 1)
        condition, cpu = rest.split(" else ", 1)
        argument = f"{cuda}{newline}{inner}if {condition}{newline}{inner}else {cpu}"
    return [
        parts[0],
        test[:ask],
        test[ask + 1 :],
        f"{fallback[:opened]}{newline}{inner}{argument}",
        ")",
    ]


@dataclass(frozen=True)
class DeviceImport:
    """``from MODULE import NAME [as ALIAS]``: where the project's own device lives."""

    module: str
    name: str
    alias: Optional[str] = None

    @property
    def bound(self) -> str:
        return self.alias or self.name

    @staticmethod
    @lru_cache(maxsize=8)
    def parse(statement: str) -> "DeviceImport":
        """ValueError unless ``statement`` is one absolute import of one name."""
        try:
            body = ast.parse(statement.strip()).body
        except SyntaxError:
            body = []
        if (
            len(body) == 1
            and isinstance(body[0], ast.ImportFrom)
            and not body[0].level
            and body[0].module
            and len(body[0].names) == 1
            and body[0].names[0].name != "*"
        ):
            alias = body[0].names[0]
            return DeviceImport(body[0].module, alias.name, alias.asname)
        raise ValueError(f"expected 'from MODULE import NAME', got {statement!r}")

    def statement(self, bound: str) -> str:
        alias = f" as {bound}" if bound != self.name else ""
        return f"from {self.module} import {self.name}{alias}"
