"""Rewrite one module's source text.

1. CPython's ``ast`` parses the file, resolves its imports and finds the chunks:
   the statements whose lines can hold a site (``codemod.chunks``).
2. Each chunk is parsed with libcst and visited once by every active pass together.
3. Changed chunks are formatted with black (changed lines only) and spliced back;
   the device binding and ``import torch`` are added where needed.
4. The result must parse, or nothing is written.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Sequence, Tuple, Type

import libcst as cst
from libcst.metadata import MetadataWrapper

from codemod.lines import split_lines
from codemod import binding, chunks, fstrings, grammar, imports
from codemod.diagnostics import Diagnostic
from codemod.formatting import format_changed, line_map
from codemod.names import ModuleFacts
from codemod.passes import PASSES
from codemod.passes.base import FileContext, Options, Pass


class RewriteError(Exception):
    """The rewrite produced something torchport will not write."""


class ParseError(SyntaxError):
    """The input is not valid Python (for libcst, although CPython took it)."""


class RoundTripError(RewriteError):
    """libcst does not give back the input byte for byte: nothing can be rewritten."""


@dataclass
class Rewrite:
    source: str
    code: str
    diagnostics: List[Diagnostic] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.code != self.source


class _Together(cst.CSTTransformer):
    """Runs several passes in one traversal, with each pass seeing what it would see
    alone: at each node the passes run in order, each given the node as the previous
    one left it (once a pass replaces a node by one of another type, the passes after
    it leave that node alone), and a pass whose visit returns False skips the node's
    children on its own."""

    def __init__(self, passes: Sequence[Pass]) -> None:
        super().__init__()
        self.passes = passes
        self.skipping: Dict[int, cst.CSTNode] = {}  # pass index -> node it skips under
        # Attribute hooks (visit_FunctionDef_body, ...) cost a third of the traversal:
        # call them only for passes that define some.
        self.hooked = [i for i, p in enumerate(passes) if _has_attribute_hooks(type(p))]
        self.current: Optional[Pass] = None  # the pass running, to name it on a crash

    def _active(self) -> List[int]:
        return [i for i in range(len(self.passes)) if i not in self.skipping]

    def on_visit(self, node: cst.CSTNode) -> bool:
        for i in self._active():
            self.current = self.passes[i]
            if self.passes[i].on_visit(node) is False:
                self.skipping[i] = node
        return True

    def on_leave(self, original_node, updated_node):
        for i, p in enumerate(self.passes):
            if self.skipping.get(i, original_node) is not original_node:
                continue  # inside a node this pass skips
            self.skipping.pop(i, None)
            if type(updated_node) is not type(original_node):
                continue
            self.current = p
            updated_node = p.on_leave(original_node, updated_node)
        return updated_node

    def on_visit_attribute(self, node, attribute) -> None:
        for i in self.hooked:
            if i not in self.skipping:
                self.passes[i].on_visit_attribute(node, attribute)

    def on_leave_attribute(self, original_node, attribute) -> None:
        for i in self.hooked:
            if i not in self.skipping:
                self.passes[i].on_leave_attribute(original_node, attribute)


def _has_attribute_hooks(cls: type) -> bool:
    return any(
        re.match(r"(visit|leave)_[A-Z][A-Za-z]*_[a-z]", name) for name in dir(cls)
    )


def _hit_lines(lines: Sequence[str], passes: Sequence[Type[Pass]], facts: ModuleFacts):
    """Lines that can hold a site: a pass trigger, or a name imported from an API a
    pass cares about (``from torch.cuda.amp import GradScaler``, then ``GradScaler()``).
    """
    words = [p.TRIGGER.pattern for p in passes]
    words += [p.HITS.pattern for p in passes if p.HITS is not None]
    aliases = [
        re.escape(local)
        for local, target in facts.imports.items()
        if any(p.TRIGGER.search(target) for p in passes)
    ]
    if aliases:
        words.append(r"\b(?:%s)\b" % "|".join(aliases))
    pattern = re.compile("|".join(f"(?:{w})" for w in words))
    return {
        number for number, line in enumerate(lines, start=1) if pattern.search(line)
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
    binding.plan_binding(tree, facts, context, reuse_device)
    context_words = [p.CONTEXT.pattern for p in active if p.CONTEXT is not None]
    whole = set()
    if context_words:  # sites a pass must see with their whole top-level statement
        pattern = re.compile("|".join(context_words))
        whole = {n for n, line in enumerate(lines, start=1) if pattern.search(line)}
    found = chunks.select(tree, _hit_lines(lines, active, facts), lines, whole)
    instances = [p(context) for p in active]
    outputs: Dict[Tuple[int, int], List[str]] = {}
    local_maps: Dict[Tuple[int, int], List[int]] = {}
    device_uses: List[chunks.Chunk] = []  # chunks whose rewrite reads the device
    for chunk, text, module in _parsed(found, lines):
        metadata = _LazyMetadata(module)
        context.line_offset = chunk.start - 1
        context.col_offset = len(chunk.indent)
        used_device = context.needs_device
        context.needs_device = False

        def traverse(module=module, chunk=chunk, metadata=metadata) -> cst.Module:
            for instance in instances:
                instance.metadata = metadata
                instance.changed = False
            together = _Together(instances)
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
        new_module = fstrings.rewrite_chunk(module, traverse, context, metadata, text)
        if context.needs_device:
            device_uses.append(chunk)
        context.needs_device |= used_device
        if not any(i.changed for i in instances):
            continue
        new_text = new_module.code
        if context.binding_index is not None and _is_binding_chunk(
            chunk, tree, context
        ):
            comment = _trailing_comment(new_module)
            new_text = binding.binding_statement(
                context, new_module.default_newline, comment
            )
        else:
            _check_built(new_module, new_text, instances, context)
            if format_mode is not None:
                formatted = format_changed(
                    text, new_text, _narrower(format_mode, chunk.indent)
                )
                if formatted != new_text and _formatting_is_safe(new_text, formatted):
                    new_text = formatted
        original = lines[chunk.start - 1 : chunk.end]
        outputs[(chunk.start, chunk.end)] = chunks.splice(
            original, text, new_text, chunk.indent
        )
        local_maps[(chunk.start, chunk.end)] = line_map(text, new_text)
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
        try:
            grammar.parse(code)
        except (SyntaxError, ValueError) as error:
            names = ", ".join(p.__name__ for p in active)
            raise RewriteError(
                f"rewrite produced invalid Python ({_syntax_message(error, mapping)}); passes: {names}"
            )
        if positions == "output":
            diagnostics = [
                replace(d, line=mapping.get(d.line, d.line)) for d in diagnostics
            ]
        diagnostics = imports.with_binding_reports(
            diagnostics, code, context, mapping, positions, device_uses
        )
    return Rewrite(source, code, diagnostics)


def _parsed(found: List[chunks.Chunk], lines: Sequence[str]):
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
            _check_reproduced(module, text, chunk.start)
            parsed.append((chunk, text, module))
    parsed = [item for item in parsed if item[0].top not in fallback]
    for start, end in fallback:
        chunk = chunks.Chunk(start, end, "", (start, end))
        text = chunk.dedented(lines)
        module = _parse(text)
        if module is None:  # ast accepted the file, libcst does not
            raise ParseError(f"libcst cannot parse lines {start}-{end}")
        _check_reproduced(module, text, start)
        parsed.append((chunk, text, module))
    return sorted(parsed, key=lambda item: item[0].start)


def _parse(text: str) -> Optional[cst.Module]:
    try:
        return cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError):
        return None


class _LazyMetadata:
    """The metadata mapping a pass sees, each provider resolved on first use: most
    chunks (a comment that mentions CUDA) never report anything, and only a few
    passes ask for more than positions."""

    def __init__(self, module: cst.Module) -> None:
        self.wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        self.resolved: Dict[type, object] = {}

    def __contains__(self, provider) -> bool:
        return True

    def __getitem__(self, provider):
        if provider not in self.resolved:
            self.resolved[provider] = self.wrapper.resolve(provider)
        return self.resolved[provider]


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


def _check_reproduced(module: cst.Module, text: str, first_line: int) -> None:
    """libcst must give back the chunk byte for byte, or nothing can be rewritten
    (seen with a form feed opening the line after an indented block)."""
    if module.code == text:
        return
    for offset, (a, b) in enumerate(zip(split_lines(text), split_lines(module.code))):
        if a != b:
            break
    else:
        offset = min(text.count("\n"), module.code.count("\n"))
    raise RoundTripError(
        f"libcst does not reproduce line {first_line + offset} of this file exactly"
    )


def _check_built(
    built: cst.Module, code: str, passes: Sequence[Pass], context: FileContext
) -> None:
    """A chunk's new code must parse, round-trip, and parse into the tree the passes
    built (a node without the parentheses its precedence needs would not)."""
    problem = None
    try:
        reparsed = cst.parse_module(code)
    except cst.ParserSyntaxError as error:
        problem = f"produced invalid Python ({' '.join(str(error).split())[:200]})"
    else:
        if reparsed.code != code:
            problem = "produced code that does not round-trip through libcst"
        elif _shape(built) != _shape(reparsed):
            problem = (
                "produced code that parses into a different tree than the one built"
            )
    if problem is None:
        return
    culprits = ", ".join(type(p).__name__ for p in passes if p.changed)
    codes = sorted({d.code for d in context.diagnostics if d.applied})
    raise RewriteError(f"pass {culprits} ({', '.join(codes)}) {problem}")


def _shape(tree: cst.CSTNode) -> List[Tuple[int, str]]:
    """Node types with their depth, leaving out whitespace and punctuation."""
    shape: List[Tuple[int, str]] = []
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        name = type(node).__name__
        if name in _PUNCTUATION:
            continue
        shape.append((depth, name))
        stack.extend((child, depth + 1) for child in reversed(node.children))
    return shape


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


def _formatting_is_safe(code: str, formatted: str) -> bool:
    """Black may change layout, never meaning, and libcst must read its result back
    (it fails to on some lines black re-indented from tabs)."""
    try:
        if ast.dump(ast.parse(code)) != ast.dump(ast.parse(formatted)):
            return False
        return cst.parse_module(formatted).code == formatted
    except (SyntaxError, ValueError, cst.ParserSyntaxError):
        return False


def _syntax_message(error: Exception, mapping: Dict[int, int]) -> str:
    """The error, at the line of the input it comes from (the user has no other)."""
    if isinstance(error, SyntaxError):
        written = error.lineno or 0
        line = max((n for n, out in mapping.items() if out <= written), default=1)
        return f"{error.msg} (from line {line} of the input)"
    return str(error)
