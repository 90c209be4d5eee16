"""What a rewrite must pass before anything is written.

Each check runs on a chunk only when it changed, on text that was parsed once: the
chunk as read must come back from libcst byte for byte; the code the passes built
must parse, round-trip and parse into the tree they built; black's layout must not
change the meaning.
"""

from __future__ import annotations

import ast
from typing import List, Sequence, Tuple

import libcst as cst

from codemod.lines import split_lines
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
    """Node types with their depth, leaving out whitespace and punctuation."""
    found: List[Tuple[int, str]] = []
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        name = type(node).__name__
        if name in _PUNCTUATION:
            continue
        found.append((depth, name))
        stack.extend((child, depth + 1) for child in reversed(node.children))
    return found


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
        if ast.dump(ast.parse(code)) != ast.dump(ast.parse(formatted)):
            return False
        return cst.parse_module(formatted).code == formatted
    except (SyntaxError, ValueError, cst.ParserSyntaxError):
        return False


def check_valid(code: str, names: str) -> None:
    """The whole new file must be Python."""
    try:
        ast.parse(code)
    except (SyntaxError, ValueError) as error:
        raise RewriteError(
            f"rewrite produced invalid Python ({syntax_message(error)}); passes: {names}"
        )


def syntax_message(error: Exception) -> str:
    if isinstance(error, SyntaxError):
        return f"{error.msg} (line {error.lineno}, column {error.offset})"
    return str(error)
