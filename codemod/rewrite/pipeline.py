"""Rewrite one module's source text.

1. CPython's ``ast`` parses the file, resolves its imports and finds the chunks:
   the statements whose lines can hold a site (``codemod.rewrite.chunks``).
2. Each chunk is parsed with libcst and visited once by every active pass together,
   skipping the statements in it that hold no hit (``codemod.rewrite.traversal``).
3. Changed chunks are checked (``codemod.rewrite.checks``), formatted with black (changed
   lines only) and spliced back; the device binding and ``import torch`` are added
   where needed.
4. The result must parse, or nothing is written.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
from dataclasses import dataclass, field, replace
from typing import Dict, Iterable, List, Optional, Pattern, Sequence, Set, Tuple, Type

import libcst as cst

from codemod.model.lines import split_lines
from codemod.rewrite.linediff import opcodes
from codemod.rewrite import device as binding
from codemod.rewrite import chunks
from codemod.rewrite import fstrings
from codemod.rewrite import grammar
from codemod.rewrite import imports
from codemod.rewrite.checks import (  # noqa: F401  (RoundTripError: raised for callers)
    RewriteError,
    RoundTripError,
    check_built,
    check_reproduced,
    check_valid,
    formatting_is_safe,
)
from codemod.model.diagnostic import Diagnostic
from codemod.rewrite.formatting import format_changed, line_map
from codemod.rewrite.names import ModuleFacts
from codemod.passes import PASSES
from codemod.passes.base import FileContext, Options, Pass
from codemod.passes.parens import BarePositions
from codemod.rewrite.traversal import (
    LazyMetadata,
    Together,
    outside,
    statement_ids,
    statement_nodes,
)


class ParseError(SyntaxError):
    """The input is not valid Python (for libcst, although CPython took it)."""


@dataclass
class Rewrite:
    source: str
    code: str
    diagnostics: List[Diagnostic] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.code != self.source


def _hit_lines(
    source: str, ends: Sequence[int], passes: Sequence[Type[Pass]], facts: ModuleFacts
) -> Set[int]:
    """Lines that can hold a site: a pass trigger, or a name imported from an API a
    pass cares about (``from torch.cuda.amp import GradScaler``, then ``GradScaler()``).
    """
    patterns = {p.TRIGGER for p in passes}
    patterns.update(filter(None, (p.hits_in(source) for p in passes)))
    aliases = [
        re.escape(local)
        for local, target in facts.imports.items()
        if any(p.TRIGGER.search(target) for p in passes)
    ]
    if aliases:
        patterns.add(re.compile(r"\b(?:%s)\b" % "|".join(aliases)))
    return _matching_lines(source, ends, patterns)


def _context_lines(
    source: str,
    lines: Sequence[str],
    ends: Sequence[int],
    patterns: Sequence[Optional[Pattern[str]]],
    facts: ModuleFacts,
) -> Set[int]:
    """Lines one of ``patterns`` (passes' ``CONTEXT`` or ``FUNCTION_CONTEXT``)
    matches as written, or with the imported names in them spelled out (``mark(...)``
    after ``from torch.cuda.nvtx import mark`` reads ``torch.cuda.nvtx.mark(...)``)."""
    given = [p for p in patterns if p is not None]
    if not given:
        return set()
    found = _matching_lines(source, ends, given)
    aliases = {
        local: target
        for local, target in facts.imports.items()
        if local != target and target.startswith("torch.")
    }
    if not aliases:
        return found
    alias = re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, aliases)))
    for number in _matching_lines(source, ends, [alias]) - found:
        spelled = alias.sub(lambda m: aliases[m.group()], lines[number - 1])
        if any(p.search(spelled) for p in given):
            found.add(number)
    return found


def _matching_lines(
    source: str, ends: Sequence[int], patterns: Iterable[Pattern[str]]
) -> Set[int]:
    """The lines where a match of one of ``patterns`` starts. Each pattern scans the
    whole text once: one alternation of them all, or a scan line by line, defeats
    the regex engine's skipping ahead to a first character."""
    return {
        bisect.bisect_right(ends, match.start()) + 1
        for pattern in patterns
        for match in pattern.finditer(source)
    }


def rewrite_source(
    source: str,
    options: Options,
    *,
    format_mode=None,
    passes: Sequence[Type[Pass]] = PASSES,
    positions: str = "output",
    reuse_device: bool = True,
) -> Rewrite:
    """Rewrite ``source``. Raises ``ParseError`` when it is not valid Python and
    ``RewriteError`` when the rewrite would not be.

    ``format_mode`` is a black Mode (None: no formatting). ``positions`` says which
    text diagnostics point into: "output" (the rewritten file) or "input".
    ``reuse_device=False`` never reuses the module's own device variable.
    """
    active = [p for p in passes if p.TRIGGER.search(source)]
    if not active:
        return Rewrite(source, source)
    try:
        tree = grammar.parse(source)  # ast, or libcst for newer grammar
    except ValueError as error:  # NUL bytes
        raise ParseError(str(error)) from None
    lines = split_lines(source)
    facts = ModuleFacts.of(tree, source)
    context = FileContext(options, source, facts)
    context.indent_unit = chunks.indent_unit(tree, lines)
    binding.plan_binding(tree, facts, context, reuse_device)
    ends = list(itertools.accumulate(map(len, lines)))  # offset past each line
    contexts = [p.CONTEXT for p in active]
    whole = _context_lines(source, lines, ends, contexts, facts)
    functions = [p.FUNCTION_CONTEXT for p in active]
    function = _context_lines(source, lines, ends, functions, facts)
    hits = _hit_lines(source, ends, active, facts) | whole | function
    binding_line = set()
    if context.binding_index is not None:
        binding_line = {chunks.first_line(tree.body[context.binding_index])}
    found = chunks.select(tree, hits, lines, whole, function, binding_line)
    instances = [p(context) for p in active]
    outputs: Dict[Tuple[int, int], List[str]] = {}
    local_maps: Dict[Tuple[int, int], List[int]] = {}
    device_uses: List[chunks.Chunk] = []  # chunks whose rewrite reads the device
    for chunk, text, module in _parsed(found, lines, tree):
        metadata = LazyMetadata(module, chunk.statements, chunk.start - 1, text)
        context.line_offset = chunk.start - 1
        context.col_offset = len(chunk.indent)
        context.chunk_ends_block = chunk.to_end
        context.chunk_text = text
        used_device = context.needs_device
        context.needs_device = False
        skipped = outside(module, chunk.statements, hits, lines)
        last: List[Together] = []  # the traversal whose result is kept

        def traverse(
            module=module, chunk=chunk, metadata=metadata, skipped=skipped, last=last
        ) -> cst.Module:
            for instance in instances:
                instance.metadata = metadata
                instance.changed = False
            positions = BarePositions(context.bare)
            together = Together([positions, *instances], skipped, metadata.positions)
            last[:] = [together]
            try:
                return module.visit(together)
            except RecursionError:
                raise
            except Exception as error:  # a bug in a pass: name it, write nothing
                raise RewriteError(
                    f"pass {type(together.current).__name__} failed:"
                    f" {type(error).__name__}: {error} (lines {chunk.start}-{chunk.end})"
                ) from error

        # Sites inside f-strings that cannot be fixed validly are reported instead.
        new_module = fstrings.rewrite_chunk(
            module, traverse, context, metadata, text, chunk.statements
        )
        together = last[0]
        if context.needs_device:
            device_uses.append(chunk)
        context.needs_device |= used_device
        if not any(i.changed for i in instances):
            continue
        # Only a chunk that changed is written back: it must be read exactly.
        check_reproduced(module, text, chunk.start)
        new_text = new_module.code
        if context.binding_index is not None and _is_binding_chunk(
            chunk, tree, context
        ):
            comment = _trailing_comment(new_module)
            new_text = binding.binding_statement(
                context, new_module.default_newline, comment
            )
            pieces = [(chunk, text, new_text)]
        else:
            pieces = []
            found_pieces = _pieces(
                chunk, (text, new_text), (module, new_module), together, lines
            )
            for piece, old, new, built, stub in found_pieces:
                check_built(built, new + stub, instances, context)
                if format_mode is not None:
                    mode = _narrower(format_mode, piece.indent)
                    formatted = format_changed(old + stub, new + stub, mode)
                    if (
                        formatted != new + stub
                        and formatted.endswith(stub)
                        and formatting_is_safe(new + stub, formatted)
                    ):
                        new = formatted[: len(formatted) - len(stub)]
                pieces.append((piece, old, new))
        for piece, old, new in pieces:
            span = (piece.start, piece.end)
            original = lines[piece.start - 1 : piece.end]
            outputs[span] = chunks.splice(
                original, old, new, piece.indent, context.indent_unit
            )
            local_maps[span] = line_map(old, new)
    if reuse_device and not binding.bound_before_uses(tree, context, device_uses):
        return rewrite_source(
            source,
            options,
            format_mode=format_mode,
            passes=passes,
            positions=positions,
            reuse_device=False,
        )
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    added = imports.insertions(tree, lines, context, device_uses, newline)
    code, mapping = _assemble(lines, outputs, local_maps, added)
    code = imports.remove_unused(code, context, mapping)
    diagnostics = sorted(context.diagnostics, key=lambda d: (d.line, d.col, d.code))
    if code != source:
        check_valid(code, ", ".join(p.__name__ for p in active), mapping)
        if positions == "output":
            diagnostics = [
                replace(d, line=mapping.get(d.line, d.line)) for d in diagnostics
            ]
        diagnostics = imports.with_binding_reports(
            diagnostics, code, context, mapping, positions, device_uses
        )
    return Rewrite(source, code, diagnostics)


def _pieces(
    chunk: chunks.Chunk,
    texts: Tuple[str, str],
    modules: Tuple[cst.Module, cst.Module],
    together: Together,
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
            made = together.built.get(node, node)
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


def _parsed(found: List[chunks.Chunk], lines: Sequence[str], tree: ast.Module):
    """Each chunk with its dedented text and libcst module. A chunk that cannot be
    dedented or parsed on its own is replaced by its whole top-level statement."""
    parsed = []
    fallback = set()
    for chunk in found:
        text = chunk.dedented(lines)
        module = _parse(text) if text is not None else None
        if module is None:
            fallback.add(chunk.top)
        else:
            parsed.append((chunk, text, module))
    parsed = [item for item in parsed if item[0].top not in fallback]
    for start, end in fallback:
        chunk = chunks.top_level(tree, (start, end))
        text = chunk.dedented(lines)
        module = _parse(text)
        if module is None:  # ast accepted the file, libcst does not
            raise ParseError(f"libcst cannot parse lines {start}-{end}")
        parsed.append((chunk, text, module))
    return sorted(parsed, key=lambda item: item[0].start)


def _parse(text: str) -> Optional[cst.Module]:
    try:
        return cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError):
        return None


def _is_binding_chunk(
    chunk: chunks.Chunk, tree: ast.Module, context: FileContext
) -> bool:
    stmt = tree.body[context.binding_index]
    return chunk.start == stmt.lineno and chunk.indent == ""


def _trailing_comment(module: cst.Module) -> str:
    stmt = module.body[0] if module.body else None
    if isinstance(stmt, cst.SimpleStatementLine) and stmt.trailing_whitespace.comment:
        return stmt.trailing_whitespace.comment.value
    return ""


def _narrower(mode, indent: str):
    """Black's mode for a chunk that will be re-indented by ``indent``."""
    if not indent:
        return mode
    width = len(indent.expandtabs(4))
    return replace(mode, line_length=max(mode.line_length - width, 20))


def _assemble(lines, outputs, local_maps, added) -> Tuple[str, Dict[int, int]]:
    """The new text, and where each original line went."""
    out: List[str] = []
    mapping: Dict[int, int] = {}
    inserts: Dict[int, List[str]] = {}
    for insertion in added:
        inserts.setdefault(insertion.after_line, []).append(insertion.text)
    starts = {start: (start, end) for start, end in outputs}
    written = 0  # lines in ``out`` so far

    def emit(parts: List[str]) -> None:
        nonlocal written
        out.extend(parts)
        written += sum(part.count("\n") for part in parts)

    emit(inserts.get(0, []))
    number = 1
    while number <= len(lines):
        if number in starts:
            first, last = starts[number]
            for offset, line_number in enumerate(range(first, last + 1), start=1):
                mapping[line_number] = written + local_maps[(first, last)][offset]
            emit(outputs[(first, last)])
        else:
            last = number
            mapping[number] = written + 1
            emit([lines[number - 1]])
        emit(inserts.get(last, []))
        number = last + 1
    return "".join(out), mapping
