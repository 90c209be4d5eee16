"""Statements of a file written in a newer Python than the one torchport runs on.

torchport finds statements with CPython's ``ast`` (fast), which knows only the
running interpreter's grammar: on Python 3.11, ``def f[T](x: T)``, ``type X = ...``
(PEP 695), f-strings that reuse their quotes (PEP 701) and ``except A, B:`` without
parentheses (PEP 758, Python 3.14) do not parse. libcst parses them. When ``ast``
fails, libcst parses the file and the constructs ``ast`` cannot read are blanked
out of a copy, keeping every line where it is; ``ast``
then reads the copy, whose statements have the original's line numbers. Only
lines are kept: the copy is for finding statements and imports, never written.
"""

from __future__ import annotations

import ast
import sys
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from codemod.model.lines import split_lines

INTERPRETER = f"{sys.version_info.major}.{sys.version_info.minor}"

# CPython's messages for constructs of a newer grammar than the interpreter's: the
# release that brought the construct, and what it is.
NEWER_GRAMMAR = {
    "multiple exception types must be parenthesized": (
        "3.14",
        "`except A, B:` without parentheses, PEP 758",
    ),
}


def missing_grammar(message: str) -> Optional[str]:
    """The newer grammar a syntax error of the interpreter's comes from, if it
    is one: "Python 3.14 grammar: `except A, B:` without parentheses, PEP 758"."""
    for known, (release, what) in NEWER_GRAMMAR.items():
        newer = tuple(map(int, release.split("."))) > sys.version_info[:2]
        if message.startswith(known) and newer:
            return f"Python {release} grammar: {what}"
    return None


def parse(source: str) -> ast.Module:
    """``ast.parse(source)``, or, for grammar newer than the interpreter's, the
    tree of a copy with the same lines. Raises ``SyntaxError`` saying which
    grammar failed when neither ``ast`` nor libcst parses it."""
    try:
        return ast.parse(source)
    except SyntaxError as error:
        python_error = error
    try:
        module = cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError):
        raise python_error from None
    try:
        return ast.parse(_readable_copy(module, source))
    except SyntaxError:
        raise _grammar_error(python_error) from None


class GrammarError(SyntaxError):
    """libcst parses the file, ``ast`` (the interpreter's grammar) does not, and
    torchport cannot make a copy that it does."""


def _grammar_error(error: SyntaxError) -> SyntaxError:
    message = (
        f"{error.msg} (Python {INTERPRETER} grammar; libcst parses this file but"
        " torchport cannot locate its statements in it)"
    )
    newer = missing_grammar(error.msg or "")
    if newer is not None:
        message = (
            f"{error.msg} ({newer}; Python {INTERPRETER} does not read it, and libcst"
            " parses this file but torchport cannot locate its statements in it)"
        )
    return GrammarError(message, (error.filename, error.lineno, error.offset, None))


# Nodes whose text is blanked out of the copy, and what takes its place: a value
# in parentheses that open on its first line and close on its last (the statement
# keeps its span), or for type parameters nothing, lines joined by backslashes.
def _replacement(node: cst.CSTNode):
    if isinstance(node, cst.TypeAlias):
        return f"{node.name.value} = (0", ")"  # binds the name, as the alias does
    if isinstance(node, (cst.FormattedString, *_TEMPLATE_STRINGS)):
        return '(""', ")"
    if isinstance(node, cst.TypeParameters):
        return "", None
    return None


def _bare_types(node: cst.CSTNode) -> bool:
    """An ``except`` whose types are a tuple without parentheses (Python 3.14)."""
    handlers = (cst.ExceptHandler, cst.ExceptStarHandler)
    return (
        isinstance(node, handlers)
        and isinstance(node.type, cst.Tuple)
        and not node.type.lpar
    )


_TEMPLATE_STRINGS = tuple(
    getattr(cst, name) for name in ("TemplatedString",) if hasattr(cst, name)
)


class _Blanks(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        self.ranges: List[Tuple[Tuple[int, int], Tuple[int, int], tuple]] = []
        self._blanked: Set[int] = set()  # ids of nodes already blanked out

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in self._blanked:
            return False
        if _bare_types(node):  # except A, B: -> except (0): (PEP 758)
            self._blank(node.type, ("(0", ")"))
            self._blanked.add(id(node.type))  # its body is still read
            return True
        replacement = _replacement(node)
        if replacement is None:
            return True
        self._blank(node, replacement)
        return False  # what is inside goes with it

    def _blank(self, node: cst.CSTNode, replacement: tuple) -> None:
        where = self.get_metadata(PositionProvider, node)
        start, end = where.start, where.end
        self.ranges.append(
            ((start.line, start.column), (end.line, end.column), replacement)
        )


def _readable_copy(module: cst.Module, source: str) -> str:
    """``source`` with each construct ``_replacement`` names replaced, keeping its
    line breaks, so no line moves."""
    blanks = _Blanks()
    MetadataWrapper(module, unsafe_skip_copy=True).visit(blanks)
    lines = split_lines(source)
    starts: Dict[int, int] = {}
    offset = 0
    for number, line in enumerate(lines, start=1):
        starts[number] = offset
        offset += len(line)
    starts[len(lines) + 1] = offset
    out: List[str] = []
    position = 0
    for (line1, col1), (line2, col2), (opening, closing) in sorted(blanks.ranges):
        first, last = starts[line1] + col1, starts[line2] + col2
        out.append(source[position:first])
        breaks = source.count("\n", first, last)
        if closing is None:
            out.append(opening + " \\\n" * breaks)
        else:
            out.append(opening + "\n" * breaks + closing)
        position = last
    out.append(source[position:])
    return "".join(out)
