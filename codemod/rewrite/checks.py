"""What a rewrite must pass before anything is written.

Each check runs on a chunk only when it changed, on text that was parsed once: the
chunk as read must come back from libcst byte for byte; the code the passes built
must parse, round-trip and parse into the tree they built; black's layout must not
change the meaning.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
from typing import Dict, List, Sequence, Tuple

import libcst as cst

from codemod.rewrite import grammar
from codemod.model.lines import split_lines
from codemod.passes.base import FileContext, Pass


class RewriteError(Exception):
    """The rewrite produced something torchport will not write."""


class RoundTripError(RewriteError):
    """libcst does not give back the input byte for byte: nothing can be rewritten."""


def check_reproduced(module: cst.Module, text: str, first_line: int) -> None:
    """libcst must give back the chunk byte for byte, or nothing can be rewritten
    (seen with a form feed opening the line after an indented block)."""
    code = module.code
    if code == text:
        return
    for offset, (a, b) in enumerate(zip(split_lines(text), split_lines(code))):
        if a != b:
            break
    else:
        offset = min(text.count("\n"), code.count("\n"))
    raise RoundTripError(
        f"libcst does not reproduce line {first_line + offset} of this file exactly"
    )


def check_built(
    built: Sequence[cst.CSTNode],
    code: str,
    passes: Sequence[Pass],
    context: FileContext,
) -> None:
    """The new code of a chunk or of one of its statements must parse, round-trip,
    and parse into the statements the passes built (a node without the parentheses
    its precedence needs would not)."""
    problem = None
    try:
        reparsed = cst.parse_module(code)
    except cst.ParserSyntaxError as error:
        problem = f"produced invalid Python ({' '.join(str(error).split())[:200]})"
    else:
        if reparsed.code != code:
            problem = "produced code that does not round-trip through libcst"
        elif [shape(node) for node in built] != [shape(s) for s in reparsed.body]:
            problem = (
                "produced code that parses into a different tree than the one built"
            )
    if problem is None:
        return
    culprits = ", ".join(type(p).__name__ for p in passes if p.changed)
    codes = sorted({d.code for d in context.diagnostics if d.applied})
    raise RewriteError(f"pass {culprits} ({', '.join(codes)}) {problem}")


def shape(tree: cst.CSTNode) -> List[Tuple[int, str]]:
    """Node types with their depth, leaving out whitespace and punctuation.

    Children are taken in the order of their node's fields, not libcst's
    ``children`` (a visit of its own per node, most of a check's cost): both trees
    compared are listed the same way."""
    found: List[Tuple[int, str]] = []
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        name = type(node).__name__
        if name in _PUNCTUATION:
            continue
        found.append((depth, name))
        stack.extend((child, depth + 1) for child in reversed(_children(node)))
    return found


def _children(node: cst.CSTNode) -> List[cst.CSTNode]:
    found: List[cst.CSTNode] = []
    for name in _field_names(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(v for v in value if isinstance(v, cst.CSTNode))
    return found


@functools.lru_cache(maxsize=None)
def _field_names(kind: type) -> Tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(kind))


_PUNCTUATION = {
    "SimpleWhitespace",
    "ParenthesizedWhitespace",
    "TrailingWhitespace",
    "EmptyLine",
    "Newline",
    "Comment",
    "Comma",
    "LeftParen",
    "RightParen",
    "Semicolon",
}


def formatting_is_safe(code: str, formatted: str) -> bool:
    """Black may change layout, never meaning, and libcst must read its result back
    (it fails to on some lines black re-indented from tabs)."""
    try:
        before, after = ast.parse(code), ast.parse(formatted)
    except (SyntaxError, ValueError):
        return False
    if not _same_statements(
        before.body, split_lines(code), after.body, split_lines(formatted)
    ):
        return False
    try:
        return cst.parse_module(formatted).code == formatted
    except cst.ParserSyntaxError:
        return False


def _same_statements(xs, x_lines, ys, y_lines) -> bool:
    """The two statement lists mean the same (``ast.dump`` equal). A statement whose
    lines are the same text on both sides is the same; only the others are compared
    node by node, so a formatted line in a long function costs that line."""
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys):
        if type(x) is not type(y):
            return False
        if _text(x, x_lines) == _text(y, y_lines) and x.col_offset == y.col_offset:
            continue
        for (name, a), (_, b) in zip(ast.iter_fields(x), ast.iter_fields(y)):
            if _is_block(a) or _is_block(b):
                if not (_is_block(a) and _is_block(b)):
                    return False
                if not _same_blocks(a, x_lines, b, y_lines):
                    return False
            elif _dump(a) != _dump(b):
                return False
    return True


def _same_blocks(xs, x_lines, ys, y_lines) -> bool:
    """Statement lists, or handler / case lists (each with a body of statements)."""
    if not xs or isinstance(xs[0], ast.stmt):
        return _same_statements(xs, x_lines, ys, y_lines)
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys):
        for (name, a), (_, b) in zip(ast.iter_fields(x), ast.iter_fields(y)):
            if name == "body":
                if not _same_statements(a, x_lines, b, y_lines):
                    return False
            elif _dump(a) != _dump(b):
                return False
    return True


def _is_block(value) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and isinstance(value[0], (ast.stmt, ast.excepthandler, ast.match_case))
    )


def _dump(value) -> str:
    if isinstance(value, list):
        return repr([_dump(v) for v in value])
    return ast.dump(value) if isinstance(value, ast.AST) else repr(value)


def _text(stmt: ast.stmt, lines) -> str:
    first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
    return "".join(lines[first - 1 : stmt.end_lineno])


def check_valid(code: str, names: str, mapping: Dict[int, int]) -> None:
    """The whole new file must be Python; ``mapping`` (input line -> output line)
    lets the message cite the input line the error comes from."""
    try:
        grammar.parse(code)
    except (SyntaxError, ValueError) as error:
        raise RewriteError(
            f"rewrite produced invalid Python ({syntax_message(error, mapping)});"
            f" passes: {names}"
        )


def syntax_message(error: Exception, mapping: Dict[int, int]) -> str:
    """The error, at the line of the input it comes from (the user has no other)."""
    if isinstance(error, SyntaxError):
        written = error.lineno or 0
        line = max((n for n, out in mapping.items() if out <= written), default=1)
        return f"{error.msg} (from line {line} of the input)"
    return str(error)
