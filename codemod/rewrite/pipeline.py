"""Rewrite one module's source text, in named stages.

1. **locate**: CPython's ``ast`` parses the file, resolves its imports and finds the
   chunks, the statements whose lines can hold a site (``codemod.rewrite.hits``,
   ``codemod.rewrite.chunks``); each chunk is parsed with libcst.
2. **plan**: the names the passes will emit for torch and the device
   (``codemod.rewrite.device.plan``).
3. **visit**: each chunk is visited once by every active pass together, skipping the
   statements in it that hold no hit (``codemod.rewrite.traversal``).
4. **check** and **format**: each changed statement must parse into what the passes
   built (``codemod.rewrite.checks``); black lays out its changed lines.
5. **splice**: the changed statements go back into the file; the device binding and
   ``import torch`` are added where needed, imports made unused removed. The result
   must parse, or nothing is written.

Reusing the module's own device variable is decided in the plan: it holds when that
variable is bound before every chunk that reads the device, which is known once the
chunks before its assignment have been visited. If one of them reads the device, the
plan becomes a fresh binding and the visit starts again (the parse is kept).
"""

from __future__ import annotations

import ast
import itertools
from array import array
from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Sequence, Set, Tuple, Type

import libcst as cst

from codemod.model.diagnostic import Diagnostic
from codemod.model.lines import split_lines
from codemod.passes import PASSES
from codemod.passes.base import FileContext, Options, Pass
from codemod.passes.imported import SETTLED, settled_imports
from codemod.rewrite import chunks, fstrings, grammar, imports, relocate, standin
from codemod.rewrite.checks import (  # noqa: F401  (RoundTripError: raised for callers)
    RewriteError,
    RoundTripError,
    check_built,
    check_reproduced,
    check_valid,
    formatting_is_safe,
)
from codemod.rewrite.device import order, place, plan
from codemod.rewrite.device.text import binding_statement
from codemod.rewrite.formatting import format_changed, line_map
from codemod.rewrite.linemap import assemble
from codemod.rewrite.hits import context_lines, hit_lines, statement_spans
from codemod.passes.names import ModuleFacts
from codemod.passes import file_scans
from codemod.rewrite.pieces import changed_pieces
from codemod.rewrite.positions import LazyMetadata
from codemod.rewrite.quotes import requoted
from codemod.rewrite.traversal import SharedTraversal, outside


class ParseError(SyntaxError):
    """The input is not valid Python (for libcst, although CPython took it)."""


@dataclass
class Rewrite:
    source: str
    code: str
    diagnostics: List[Diagnostic] = field(default_factory=list)
    adds_accessor: bool = False  # the module gets an accessor of its own (_DEVICE())

    @property
    def changed(self) -> bool:
        return self.code != self.source


@dataclass
class Located:
    """What the locate stage found: the file, its facts, the lines that can hold a
    site, and (once the plan has chosen the chunks) each chunk's libcst module."""

    source: str
    tree: ast.Module
    lines: List[str]
    facts: ModuleFacts
    passes: List[Type[Pass]]  # the passes whose trigger the file matches
    hits: Set[int]  # lines that can hold a site
    whole: Set[int]  # lines whose top-level statement a pass must see
    function: Set[int]  # lines whose function a pass must see
    aside: Set[str] = field(default_factory=set)  # data ast did not read (standin)
    parses: Dict[str, Optional[cst.Module]] = field(default_factory=dict)  # by text


@dataclass
class Visit:
    """What the passes made of the file: each changed span's new lines."""

    context: FileContext
    outputs: Dict[Tuple[int, int], List[str]] = field(default_factory=dict)
    local_maps: Dict[Tuple[int, int], List[int]] = field(default_factory=dict)
    device_uses: List[chunks.Chunk] = field(default_factory=list)


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
    located = locate(source, passes)
    if located is None:
        return Rewrite(source, source)
    visit = visit_chunks(located, options, format_mode, reuse_device)
    return requoted(splice(located, visit, positions), format_mode)


# -- locate -------------------------------------------------------------------------
def locate(source: str, passes: Sequence[Type[Pass]]) -> Optional[Located]:
    """The file's chunks, parsed; None when no pass's trigger is in it."""
    active = [p for p in passes if p.TRIGGER.search(source)]
    if not active:
        return None
    try:
        view, aside = standin.read(source)  # bulky data: ast reads a stand-in
        tree = grammar.parse(view)  # ast, or libcst for newer grammar
    except ValueError as error:  # NUL bytes
        raise ParseError(str(error)) from None
    lines = split_lines(source)
    facts = ModuleFacts.of(tree, source)
    ends = array("q", itertools.accumulate(map(len, lines)))  # offset past each line
    spans = statement_spans(tree, ends)  # where hits can matter
    contexts = [p.CONTEXT for p in active]
    whole = context_lines(source, lines, ends, contexts, facts, spans)
    functions = [p.FUNCTION_CONTEXT for p in active]
    function = context_lines(source, lines, ends, functions, facts, spans)
    hits = hit_lines(source, ends, active, facts, spans) | whole | function
    return Located(source, tree, lines, facts, active, hits, whole, function, aside)


def chunks_of(located: Located, context: FileContext):
    """The chunks of the plan, each with its dedented text and libcst module. The
    statement that becomes the binding is a chunk of its own: it is replaced whole.
    """
    tree = located.tree
    binding_line = set()
    if context.binding_index is not None:
        binding_line = {chunks.first_line(tree.body[context.binding_index])}
    found = chunks.select(
        tree,
        located.hits,
        located.lines,
        located.whole,
        located.function,
        binding_line,
    )
    for first, last in context.binding_spans:  # torchport's own: no pass reads it
        found = [c for c in found if not (first <= c.start and c.end <= last)]
    return _parsed(found, located)


def _parsed(found: List[chunks.Chunk], located: Located):
    """Each chunk with its dedented text and libcst module. A chunk that cannot be
    dedented or parsed on its own is replaced by its whole top-level statement."""
    lines, tree = located.lines, located.tree
    parsed = []
    fallback = set()
    for chunk in found:
        text = chunk.dedented(lines)
        module = _parse(text, located.parses) if text is not None else None
        if module is None:
            fallback.add(chunk.top)
        else:
            parsed.append((chunk, text, module))
    parsed = [item for item in parsed if item[0].top not in fallback]
    for start, end in fallback:
        chunk = chunks.top_level(tree, (start, end))
        text = chunk.dedented(lines)
        module = _parse(text, located.parses)
        if module is None:  # ast accepted the file, libcst does not
            raise ParseError(f"libcst cannot parse lines {start}-{end}")
        parsed.append((chunk, text, module))
    return sorted(parsed, key=lambda item: item[0].start)


def _parse(text: str, parses: Dict[str, Optional[cst.Module]]):
    """libcst's module of ``text`` (None if it cannot parse it), parsed once per
    file: a second plan selects mostly the same chunks."""
    if text not in parses:
        try:
            parses[text] = cst.parse_module(text)
        except (cst.ParserSyntaxError, RecursionError):
            parses[text] = None
    return parses[text]


# -- plan and visit -----------------------------------------------------------------
def visit_chunks(located: Located, options: Options, format_mode, reuse: bool) -> Visit:
    """Every chunk through the passes, checked and formatted where it changed.

    The plan may reuse the module's own device variable: once the chunks before its
    assignment are visited it is known whether one of them reads the device, and if
    one does the plan is made again without it."""
    context = FileContext(options, located.source, located.facts)
    context.indent_unit = chunks.indent_unit(located.tree, located.lines)
    plan.plan_binding(located.tree, located.facts, context, reuse)
    file_scans.scan(context, located.tree, located.lines)
    instances = [p(context) for p in located.passes]
    visit = Visit(context)
    undecided = reuse and order.reuses_user_variable(context)
    for chunk, text, module in chunks_of(located, context):
        if undecided and order.after_binding(located.tree, context, chunk):
            if not order.bound_before_uses(located.tree, context, visit.device_uses):
                return visit_chunks(located, options, format_mode, reuse=False)
            undecided = False
        _visit_chunk(located, visit, instances, format_mode, chunk, text, module)
    if undecided and not order.bound_before_uses(
        located.tree, context, visit.device_uses
    ):
        return visit_chunks(located, options, format_mode, reuse=False)
    return visit


def _visit_chunk(located, visit, instances, format_mode, chunk, text, module) -> None:
    context = visit.context
    metadata = LazyMetadata(module, chunk.statements, chunk.start - 1, text)
    context.line_offset = chunk.start - 1
    context.col_offset = len(chunk.indent)
    context.chunk_ends_block = chunk.to_end
    context.chunk_text = text
    used_device = context.needs_device
    context.needs_device = False
    skipped = outside(module, chunk.statements, located.hits, located.lines)
    last: List[SharedTraversal] = []  # the traversal whose result is kept

    def traverse() -> cst.Module:
        for instance in instances:
            instance.metadata = metadata
            instance.changed = False
        traversal = SharedTraversal(
            instances, skipped, metadata.positions, context.bare, context
        )
        last[:] = [traversal]
        try:
            return module.visit(traversal)
        except RecursionError:
            raise
        except Exception as error:  # a bug in a pass: name it, write nothing
            raise RewriteError(
                f"pass {type(traversal.current).__name__} failed:"
                f" {type(error).__name__}: {error} (lines {chunk.start}-{chunk.end})"
            ) from error

    # Sites inside f-strings that cannot be fixed validly are reported instead.
    new_module = fstrings.rewrite_chunk(
        module, traverse, context, metadata, text, chunk.statements
    )
    if context.needs_device:
        visit.device_uses.append(chunk)
    context.needs_device |= used_device
    if not any(i.changed for i in instances):
        return
    # Only a chunk that changed is written back: it must be read exactly.
    check_reproduced(module, text, chunk.start)
    if order.is_binding_statement(located.tree, context, chunk):
        comment = _trailing_comment(new_module)
        new_text = binding_statement(context, new_module.default_newline, comment)
        pieces = [(chunk, text, new_text)]
    else:
        found = changed_pieces(
            chunk, (text, new_module.code), (module, new_module), last[0], located.lines
        )
        pieces = [
            (
                piece,
                old,
                _checked_and_formatted(
                    old, new, built, stub, piece, format_mode, instances, context
                ),
            )
            for piece, old, new, built, stub in found
        ]
    for piece, old, new in pieces:
        span = (piece.start, piece.end)
        original = located.lines[piece.start - 1 : piece.end]
        visit.outputs[span] = chunks.splice(
            original, old, new, piece.indent, context.indent_unit
        )
        visit.local_maps[span] = line_map(old, new)


# -- check and format ---------------------------------------------------------------
def _checked_and_formatted(
    old: str, new: str, built, stub: str, piece, format_mode, instances, context
) -> str:
    """``new`` once checked against the nodes the passes ``built``, laid out by black
    where black keeps its meaning (``stub``: the body that makes a header parse)."""
    check_built(built, new + stub, instances, context)
    if format_mode is None:
        return new
    mode = _narrower(format_mode, piece.indent)
    lines = line_map(old, new)  # where each line of the piece went
    suppressed = [
        lines[line - piece.start + 1]
        for line in context.suppressed_lines
        if piece.start <= line <= piece.end
    ]
    formatted = format_changed(old + stub, new + stub, mode, suppressed)
    if (
        formatted != new + stub
        and formatted.endswith(stub)
        and formatting_is_safe(new + stub, formatted)
    ):
        return formatted[: len(formatted) - len(stub)]
    return new


def _narrower(mode, indent: str):
    """Black's mode for a chunk that will be re-indented by ``indent``."""
    if not indent:
        return mode
    width = len(indent.expandtabs(4))
    return replace(mode, line_length=max(mode.line_length - width, 20))


def _trailing_comment(module: cst.Module) -> str:
    stmt = module.body[0] if module.body else None
    if isinstance(stmt, cst.SimpleStatementLine) and stmt.trailing_whitespace.comment:
        return stmt.trailing_whitespace.comment.value
    return ""


# -- splice -------------------------------------------------------------------------
def splice(located: Located, visit: Visit, positions: str) -> Rewrite:
    """The new text: changed spans spliced in, the binding and imports added, imports
    made unused removed; checked valid, with the diagnostics' lines moved with it."""
    source, lines, context = located.source, located.lines, visit.context
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    added = place.insertions(located.tree, lines, context, visit.device_uses, newline)
    linear = source.count("\r") == source.count("\r\n")  # no lone \r ends a line
    code, mapping = assemble(lines, visit.outputs, visit.local_maps, added, linear)
    code = imports.remove_unused(code, context, mapping, located.aside)
    diagnostics = context.diagnostics
    if context.import_reports:  # imports whose uses are all ported: they run
        settled = settled_imports(context.import_reports, context.import_uses)
        diagnostics = [
            replace(d, severity="info", message=SETTLED) if id(d) in settled else d
            for d in diagnostics
        ]
    diagnostics = sorted(diagnostics, key=lambda d: (d.line, d.col, d.code))
    if code != source:
        names = ", ".join(p.__name__ for p in located.passes)
        check_valid(standin.view(code, located.aside), names, mapping)
        if positions == "output":
            diagnostics = relocate.in_output(
                diagnostics, lines, code, mapping, visit.outputs, visit.local_maps
            )
    # Below torch 2.6 a binding kept CUDA's, added or already there, says so.
    diagnostics = place.with_binding_reports(
        diagnostics, code, context, mapping, positions, visit.device_uses
    )
    return Rewrite(source, code, diagnostics, place.adds_accessor(context))
