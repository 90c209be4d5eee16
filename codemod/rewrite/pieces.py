"""The changed statements of a rewritten chunk, each checked and formatted alone.

Checking and formatting a three-line change in a 1,500-line function costs three
lines: a chunk that changed is narrowed to the smallest statements holding its
changed lines, each with its old and new text and the nodes the passes built for it.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Sequence, Set, Tuple

import libcst as cst

from codemod.model.lines import split_lines
from codemod.rewrite import chunks
from codemod.rewrite.linediff import opcodes
from codemod.rewrite.traversal import SharedTraversal, statement_ids, statement_nodes


def changed_pieces(
    chunk: chunks.Chunk,
    texts: Tuple[str, str],
    modules: Tuple[cst.Module, cst.Module],
    traversal: SharedTraversal,
    lines: Sequence[str],
) -> List[Tuple[chunks.Chunk, str, str, Sequence[cst.CSTNode], str]]:
    """The changed statements of a rewritten chunk, each with its old and new text,
    the nodes the passes built for it and a stub body ("" if none): checking and
    formatting a three-line change in a 1,500-line function costs three lines.

    A ``def``, ``class``, ``with`` or ``for`` whose header changed is two pieces or
    more: its header, checked and formatted with ``pass`` as its body, and the changed
    statements of its body. The whole chunk is one piece when the rewrite moved
    lines or the statements cannot be told apart.
    """
    (text, new_text), (module, built) = texts, modules  # as parsed, as rewritten
    whole = [(chunk, text, new_text, built.body, "")]
    old_lines, new_lines = split_lines(text), split_lines(new_text)
    if not chunk.statements:
        return whole
    # (first, end, lines added): the changed runs of the chunk, 0-based, end exclusive
    hunks = [
        (i1, i2, (j2 - j1) - (i2 - i1))
        for tag, i1, i2, j1, j2 in opcodes(old_lines, new_lines)
        if tag != "equal"
    ]
    changed = {
        chunk.start + i
        for i1, i2, _ in hunks
        for i in (range(i1, i2) if i2 > i1 else (i1 - 1, i1))
        if 0 <= i < len(old_lines)
    }
    narrowed = _narrowed(chunk.statements, chunk.top, changed, lines)
    if not narrowed or narrowed == [(chunk, "")]:
        return whole
    nodes = statement_nodes(module, chunk.statements)
    if nodes is None:
        return whole
    # A pass may merge statements it built into one (consecutive guards share one
    # `if`): a piece is checked against the nodes it built only where they are in
    # the final tree as they are.
    final = statement_ids(built)
    pieces = []
    for piece, stub in narrowed:
        if not piece.indent.startswith(chunk.indent):
            return whole
        span = _shifted(piece.start - chunk.start, piece.end - chunk.start, hunks)
        if span is None:
            return whole
        relative = chunks.Chunk(
            span[0], span[1], piece.indent[len(chunk.indent) :], piece.top
        )
        old, new = piece.dedented(lines), relative.dedented(new_lines)
        if old is None or new is None:
            return whole
        originals = dict.fromkeys(nodes[id(s)] for s in piece.statements)
        built_here = []
        for node in originals:  # a statement may have become several (`a; b` split)
            made = traversal.built.get(node, node)
            if isinstance(made, cst.FlattenSentinel):
                built_here.extend(made.nodes)
            elif not isinstance(made, cst.RemovalSentinel):
                built_here.append(made)
        if any(id(node) not in final for node in built_here):
            return whole
        if stub:
            body = cst.IndentedBlock([cst.SimpleStatementLine([cst.Pass()])])
            built_here = [node.with_changes(body=body) for node in built_here]
        pieces.append((piece, old, new, built_here, stub))
    return pieces


def _shifted(first: int, last: int, hunks) -> Optional[Tuple[int, int]]:
    """Where the lines ``first``..``last`` of a chunk (0-based) are in its rewrite
    (1-based), given its changed runs; None when a run straddles their edge."""
    before = inside = 0
    for start, end, added in hunks:
        if end < first or (end == first and start < end):
            before += added
        elif start > last + 1 or (start == last + 1 and start < end):
            continue
        elif first <= start and end <= last + 1 and (start < end or start > first):
            inside += added
        else:
            return None
    return first + before + 1, last + before + inside + 1


# Statements with one body after their header: a changed header is checked alone.
_ONE_BODY = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.With,
    ast.AsyncWith,
    ast.For,
    ast.AsyncFor,
)


def _narrowed(
    statements: Sequence[ast.stmt],
    top: chunks.Span,
    changed: Set[int],
    lines: Sequence[str],
) -> List[Tuple[chunks.Chunk, str]]:
    """The smallest statements holding the ``changed`` lines, each with its stub body
    ("" for a whole statement); empty when a changed line is in none of them."""
    pseudo = chunks.Chunk(0, 0, "", top, list(statements))
    found = chunks.narrow(pseudo, changed, lines)
    out: List[Tuple[chunks.Chunk, str]] = []
    for piece in found:
        stmt = piece.statements[0] if len(piece.statements) == 1 else None
        if not isinstance(stmt, _ONE_BODY) or getattr(stmt, "orelse", None):
            out.append((piece, ""))
            continue
        body_start = chunks.first_line(stmt.body[0])
        body_line = lines[body_start - 1]
        body_indent = body_line[: stmt.body[0].col_offset]
        if (
            body_start <= piece.start
            or body_indent.strip()
            or not body_indent.startswith(piece.indent)
            or len(body_indent) <= len(piece.indent)
        ):
            out.append((piece, ""))  # the body shares the header's line
            continue
        newline = "\r\n" if body_line.endswith("\r\n") else "\n"
        stub = body_indent[len(piece.indent) :] + "pass" + newline
        header = chunks.Chunk(piece.start, body_start - 1, piece.indent, top, [stmt])
        out.append((header, stub))
        inner = {line for line in changed if body_start <= line <= piece.end}
        if inner:
            nested = _narrowed(stmt.body, top, inner, lines)
            if not nested:
                return []
            out.extend(nested)
    return out
