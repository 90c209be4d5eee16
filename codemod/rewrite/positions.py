"""Where the nodes of a chunk are, computed only where a pass asks.

libcst's ``PositionProvider`` lays out a whole module to place its nodes; most
chunks never report anything, and a report in a 1,000-line function needs only the
statement it is in. ``LazyMetadata`` resolves providers on first use and
``StatementPositions`` places one statement at a time, paired with ``ast``'s.
"""

from __future__ import annotations

import ast
import itertools
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst
from libcst._position import CodeRange
from libcst.metadata import MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from codemod.model.lines import split_lines
from codemod.rewrite.traversal import first_line_of, pairs


class LazyMetadata:
    """The metadata mapping a pass sees, each provider resolved on first use: most
    chunks (a comment that mentions CUDA) never report anything, and only a few
    passes ask for more than positions. Positions are found statement by statement
    (``StatementPositions``) when the chunk's statements pair with ``ast``'s."""

    def __init__(
        self,
        module: cst.Module,
        statements: Sequence[ast.stmt] = (),
        offset: int = 0,
        text: str = "",
    ) -> None:
        self.wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        self.resolved: Dict[type, object] = {}
        starts = _starts(module, statements, offset, split_lines(text))
        # None when the statements do not pair: libcst's provider then, on demand.
        self.positions: Optional[StatementPositions] = None
        if starts is not None:
            self.positions = StatementPositions(module, starts, self.wrapper)
            self.resolved[PositionProvider] = self.positions

    def __contains__(self, provider) -> bool:
        return True

    def __getitem__(self, provider):
        if provider not in self.resolved:
            self.resolved[provider] = self.wrapper.resolve(provider)
        return self.resolved[provider]


# Statements whose header is written before one block (an `if`, `for` or `while`
# without `else`): their header's positions can be found with a stub body.
_ONE_BLOCK = (cst.FunctionDef, cst.ClassDef, cst.With, cst.For, cst.While, cst.If)
_STUB = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])])


class StatementPositions:
    """libcst's ``PositionProvider`` mapping, computed for the innermost statement
    the traversal is in (then the ones around it) instead of for the whole chunk: a
    report in a 1,000-line function costs the statement it is in. A statement's
    first line and indentation come from ``ast`` and the chunk's text, less the
    comment and blank lines libcst puts before it; anything else falls back to the
    whole chunk."""

    def __init__(self, module: cst.Module, starts, wrapper) -> None:
        self.module = module
        self.starts: Dict[cst.CSTNode, Tuple[int, str]] = starts  # line, indent
        self.wrapper = wrapper
        self._computed: Dict[cst.CSTNode, CodeRange] = {}  # written by libcst
        self.done: Set[cst.CSTNode] = set()
        self.stack: List[cst.CSTNode] = []  # the statements the traversal is in

    def enter(self, node: cst.CSTNode) -> None:
        if node in self.starts:
            self.stack.append(node)

    def leave(self, node: cst.CSTNode) -> None:
        if self.stack and self.stack[-1] is node:
            self.stack.pop()

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        # The statements around the node first; the module's others are seldom
        # reached (a list of them made for each node would be quadratic).
        for statement in itertools.chain(reversed(self.stack), self.module.body):
            if node in self._computed:
                break
            # A compound statement's header first: a site in a function's header
            # costs its header, not its body.
            self._compute_header(statement)
            if node not in self._computed:
                self._compute(statement)
        if node not in self._computed:  # the module itself, say
            return self.wrapper.resolve(PositionProvider)[node]
        return self._computed[node]

    def _compute_header(self, statement: cst.CSTNode) -> None:
        if statement in self.done or not isinstance(statement, _ONE_BLOCK):
            return
        if getattr(statement, "orelse", None) is not None:
            return
        stub = statement.with_changes(body=_STUB)  # the same header nodes
        self._codegen(stub, *self.starts[statement])
        self._computed.pop(stub, None)  # its end is not the statement's

    def _compute(self, statement: cst.CSTNode) -> None:
        if statement in self.done:
            return
        self.done.add(statement)
        self._codegen(statement, *self.starts[statement])

    def _codegen(self, statement: cst.CSTNode, line: int, indent: str) -> None:
        line -= len(statement.leading_lines)
        decorators = getattr(statement, "decorators", ())
        if decorators:
            line -= len(decorators[0].leading_lines)
        state = PositionProvidingCodegenState(
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
            provider=self,  # type: ignore[arg-type]
            line=line,
            indent_tokens=[indent] if indent else [],  # only its width counts
        )
        statement._codegen(state)


def _starts(
    module: cst.Module,
    statements: Sequence[ast.stmt],
    offset: int,
    lines: Sequence[str],
) -> Optional[Dict[cst.CSTNode, Tuple[int, str]]]:
    """Each statement of ``module`` (nested ones too, not an ``elif``, which is
    written as part of its ``if``) -> its first line in the chunk (its ``ast``
    counterparts' first line less ``offset``) and that line's indentation; None when
    the trees do not pair."""
    if not statements or len(module.body) == 0:
        return None
    found: Dict[cst.CSTNode, Tuple[int, str]] = {}
    elifs = set()
    for node, group in pairs(module, statements):
        if node is None:
            return None
        if isinstance(node, cst.If) and isinstance(node.orelse, cst.If):
            elifs.add(node.orelse)
        line = min(first_line_of(s) for s in group) - offset
        if not 1 <= line <= len(lines):
            return None
        text = lines[line - 1]
        found[node] = (line, text[: len(text) - len(text.lstrip(" \t"))])
    for node in elifs:
        found.pop(node, None)
    if not set(module.body) <= set(found):
        return None
    return found
