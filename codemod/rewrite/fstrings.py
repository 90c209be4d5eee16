"""Fixes inside f-string replacement fields, kept valid and exact, or reported.

Before Python 3.12 (PEP 701) a replacement field may not hold the quote character of
an enclosing f-string, a backslash or, in a one-line f-string, a line break:
``f"{torch.cuda.get_device_name(0)}"`` cannot become a field holding ``"cpu"``.
torchport supports Python 3.9, so each chunk's rewrite is checked field by field:

1. a string literal the fix put in a field is re-quoted with the other quote where
   that keeps its value (no quote or backslash inside);
2. a field still invalid before 3.12, or a self-documenting field (``{expr=}``
   prints its own source text, so any rewrite changes the output) that a fix
   changed, is given up: the chunk is rewritten again with the nodes of that field
   claimed, so no pass touches them, and the sites inside become reports. The rest
   of the chunk, and of the file, keeps its fixes.

``rewrite_chunk`` is what the transform calls for each chunk.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import Callable, Dict, List, Sequence, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from codemod.passes.base import FileContext

QUOTES = ("'", '"')
_F_STRING = re.compile(r"(?<![\w])[rRbBuU]?[fF][rR]?['\"]")
_STRING_PREFIX = "rRbBuUfF"

QUOTE_REASON = (
    "not rewritten: inside this f-string field the fix would need a quote or"
    " backslash that Python before 3.12 does not accept there"
)
SELF_DOCUMENTING_REASON = (
    "not rewritten: a self-documenting f-string field (`{expr=}`) prints its own"
    " source text, which the fix would change"
)


def _quote(node: cst.FormattedString) -> str:
    return node.start.lstrip(_STRING_PREFIX)


def _fields(module: cst.CSTNode) -> List[Tuple[cst.FormattedStringExpression, str]]:
    """Each replacement field (nested ones too) with the quotes enclosing it."""
    found: List[Tuple[cst.FormattedStringExpression, str]] = []

    def visit(node: cst.CSTNode, quotes: str) -> None:
        if isinstance(node, cst.FormattedString):
            quotes += _quote(node)[0] + ("3" if len(_quote(node)) == 3 else "1")
        if isinstance(node, cst.FormattedStringExpression):
            found.append((node, quotes))
        for child in node.children:
            visit(child, quotes)

    visit(module, "")
    return found


def _field_code(field: cst.FormattedStringExpression) -> str:
    return cst.Module([]).code_for_node(field.expression)


def _valid_before_3_12(field: cst.FormattedStringExpression, quotes: str) -> bool:
    """``quotes``: each enclosing f-string's quote char followed by 1 or 3."""
    code = _field_code(field)
    if "\\" in code:
        return False
    for char, width in zip(quotes[::2], quotes[1::2]):
        if (char * int(width)) in code or (width == "1" and "\n" in code):
            return False
    return True


class _Requote(cst.CSTTransformer):
    """String literals in fields take the quote no enclosing f-string uses, where
    that keeps their value."""

    def __init__(self) -> None:
        super().__init__()
        self.enclosing: List[str] = []

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self.enclosing.append(_quote(node)[0])

    def leave_FormattedString(self, original_node, updated_node):
        self.enclosing.pop()
        return updated_node

    def leave_SimpleString(self, original_node, updated_node):
        value = updated_node.value
        prefix = value[: len(value) - len(value.lstrip(_STRING_PREFIX))]
        body = value[len(prefix) + 1 : -1]
        quote = value[len(prefix)]
        if not self.enclosing or quote not in self.enclosing:
            return updated_node
        free = [q for q in QUOTES if q not in self.enclosing]
        if (
            not free
            or value[len(prefix) :].startswith(quote * 3)
            or any(c in body for c in ("\\", *QUOTES))
        ):
            return updated_node
        return updated_node.with_changes(value=f"{prefix}{free[0]}{body}{free[0]}")


def needs_python_3_12(module: cst.Module) -> bool:
    return any(not _valid_before_3_12(f, q) for f, q in _fields(module))


def _bad_fields(
    original: cst.Module, new: cst.Module, source_needs_3_12: bool
) -> List[Tuple[int, int, str]]:
    """(line, ordinal among the fields starting on that line, reason) of each field
    of ``new`` that cannot stay."""
    candidates = [
        (field, quotes)
        for field, quotes in _fields(new)
        if field.equal is not None
        or (not source_needs_3_12 and not _valid_before_3_12(field, quotes))
    ]
    if not candidates:
        return []
    new_fields = _by_line(new, _positions(new))
    original_fields = _by_line(original, _positions(original))
    bad = []
    for field, quotes in candidates:
        line = next(n for n, fields in new_fields.items() if field in fields)
        ordinal = new_fields[line].index(field)
        if field.equal is not None:
            before = original_fields.get(line, [])
            if ordinal >= len(before) or _field_code(before[ordinal]) != _field_code(
                field
            ):
                bad.append((line, ordinal, SELF_DOCUMENTING_REASON))
        elif not _valid_before_3_12(field, quotes):
            bad.append((line, ordinal, QUOTE_REASON))
    return bad


def _positions(module: cst.Module):
    return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


def _by_line(module: cst.Module, positions) -> Dict[int, List[cst.CSTNode]]:
    """The fields starting on each line, in order."""
    lines: Dict[int, List[cst.CSTNode]] = {}
    for field, _ in _fields(module):
        lines.setdefault(positions[field].start.line, []).append(field)
    return lines


class _State:
    """What a chunk's traversal adds to the file context, to undo a failed try."""

    def __init__(self, context: FileContext) -> None:
        self.diagnostics = len(context.diagnostics)
        self.unused_imports = len(context.unused_imports)
        self.needs_device = context.needs_device
        self.needs_torch = context.needs_torch
        self.claimed = set(context.claimed)

    def restore(self, context: FileContext) -> None:
        del context.diagnostics[self.diagnostics :]
        del context.unused_imports[self.unused_imports :]
        context.needs_device = self.needs_device
        context.needs_torch = self.needs_torch
        context.claimed = set(self.claimed)


def rewrite_chunk(
    module: cst.Module,
    traverse: Callable[[], cst.Module],
    context: FileContext,
    metadata,
    text: str,
    statements: Sequence[ast.stmt] = (),
) -> cst.Module:
    """Run ``traverse`` (the passes over ``module``, a chunk) and return its result
    with every f-string field valid for Python 3.9+; fields that cannot be are left
    as they were and their sites reported. ``metadata``: the chunk's metadata
    (provider -> mapping), whose positions place those reports; ``text``: its
    source, to skip the checks at once where it has no f-string; ``statements``:
    its ``ast`` statements, to skip them where no fix was applied in an f-string."""
    if not _F_STRING.search(text):
        return traverse()
    state = _State(context)
    new = traverse()
    if new is module:
        return new
    fixed = [d.line for d in context.diagnostics[state.diagnostics :] if d.applied]
    if statements and not _in_f_strings(fixed, statements):
        return new  # every field is as it was
    new = new.visit(_Requote())
    source_needs_3_12 = needs_python_3_12(module)
    bad = _bad_fields(module, new, source_needs_3_12)
    if not bad:
        return new
    positions = metadata[PositionProvider]
    original_fields = _by_line(module, positions)
    given_up: List[Tuple[cst.CSTNode, str]] = []
    for line, ordinal, reason in bad:
        fields = original_fields.get(line, [])
        if ordinal < len(fields):
            given_up.append((fields[ordinal], reason))
        else:  # the fix made the field: keep the whole line's f-strings as they are
            given_up.extend((f, reason) for f in fields or [module])
    reports = _reports(context, state, given_up, positions)
    state.restore(context)
    for node, _ in given_up:
        context.claim(node)
    new = traverse().visit(_Requote())
    if _bad_fields(module, new, source_needs_3_12):  # not expected: keep the chunk
        state.restore(context)
        context.claim(module)
        reports = _reports(context, state, [(module, QUOTE_REASON)], positions)
        new = traverse()
    context.diagnostics.extend(reports)
    return new


def _in_f_strings(lines: Sequence[int], statements: Sequence[ast.stmt]) -> bool:
    """Whether one of ``lines`` (of the file) is in an f-string of ``statements``."""
    if not lines:
        return False
    spans = [
        (node.lineno, node.end_lineno or node.lineno)
        for stmt in statements
        for node in ast.walk(stmt)
        if isinstance(node, ast.JoinedStr)
    ]
    return any(first <= line <= last for line in lines for first, last in spans)


def _reports(context, state, given_up, positions):
    """The sites the first try recorded inside the given-up fields, as reports."""
    spans = []
    for node, reason in given_up:
        where = positions[node]
        spans.append(
            (
                _file_position(context, where.start),
                _file_position(context, where.end),
                reason,
            )
        )
    reports = []
    for diagnostic in context.diagnostics[state.diagnostics :]:
        for start, end, reason in spans:
            if start <= (diagnostic.line, diagnostic.col) <= end:
                message = f"{diagnostic.message} ({reason})"
                reports.append(
                    replace(diagnostic, applied=False, fix="none", message=message)
                )
                break
    return reports


def _file_position(context: FileContext, position) -> Tuple[int, int]:
    return (
        position.line + context.line_offset,
        position.column + 1 + context.col_offset,
    )
