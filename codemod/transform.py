"""Rewrite one module's source text: parse, run the passes, insert the binding, check."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple, Type

import libcst as cst
from libcst.metadata import MetadataWrapper

from codemod.binding import binding_statement, insert_binding, plan_binding
from codemod.diagnostics import Diagnostic
from codemod.formatting import format_changed, line_map
from codemod.linediff import opcodes
from codemod.passes import PASSES
from codemod.passes.base import FileContext, Options, Pass


class RewriteError(Exception):
    """The rewrite produced something torchport will not write."""


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


def rewrite_source(
    source: str,
    options: Options,
    *,
    format_mode=None,
    passes: Sequence[Type[Pass]] = PASSES,
    positions: str = "output",
) -> Rewrite:
    """Rewrite ``source``. Raises ``libcst.ParserSyntaxError`` when it does not parse,
    and ``RewriteError`` when the rewrite would not be valid Python.

    ``format_mode`` is a black Mode (None: no formatting). ``positions`` says which
    text diagnostics point into: "output" (the rewritten file) or "input".
    """
    module = cst.parse_module(source)
    if module.code != source:
        # Seen with a form feed opening the line after an indented block.
        raise RoundTripError(
            f"libcst does not reproduce line {_first_difference(source, module.code)}"
            " of this file exactly"
        )
    context = FileContext(options, source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    plan_binding(wrapper, context)
    # Each step that changed the tree, kept to name the culprit if the result is bad.
    steps: List[Tuple[str, cst.Module]] = []
    for pass_class in passes:
        if not pass_class.TRIGGER.search(source):
            continue
        transformer = pass_class(context)
        first = len(context.diagnostics)
        try:
            result = wrapper.visit(transformer)
        except RecursionError:
            raise
        except Exception as error:
            raise RewriteError(
                f"pass {pass_class.__name__} failed: {type(error).__name__}: {error}"
            ) from error
        if transformer.changed:
            steps.append((_step_name(pass_class, context.diagnostics[first:]), result))
            wrapper = MetadataWrapper(result, unsafe_skip_copy=True)
    module = insert_binding(wrapper.module, context)
    if module is not wrapper.module:
        steps.append(("the device binding", module))
    code = module.code
    if code != source:
        _check_rewrite(source, code, module, steps)
        if format_mode is not None:
            keep = binding_statement(context, module.default_newline)
            formatted = format_changed(source, code, format_mode, keep)
            if formatted != code and _formatting_is_safe(source, code, formatted):
                code = formatted
    diagnostics = sorted(context.diagnostics, key=lambda d: (d.line, d.col, d.code))
    if positions == "output" and code != source:
        mapping = line_map(source, code)
        diagnostics = [_moved(d, mapping) for d in diagnostics]
    return Rewrite(source, code, diagnostics)


def _moved(diagnostic: Diagnostic, mapping: List[int]) -> Diagnostic:
    from dataclasses import replace

    line = (
        mapping[diagnostic.line] if diagnostic.line < len(mapping) else diagnostic.line
    )
    return replace(diagnostic, line=line)


def _first_difference(a: str, b: str) -> int:
    for number, (x, y) in enumerate(
        zip(a.splitlines(keepends=True), b.splitlines(keepends=True)), start=1
    ):
        if x != y:
            return number
    return min(a.count("\n"), b.count("\n")) + 1


def _step_name(pass_class: Type[Pass], diagnostics: Sequence[Diagnostic]) -> str:
    codes = sorted({d.code for d in diagnostics if d.applied})
    return f"pass {pass_class.__name__}" + (f" ({', '.join(codes)})" if codes else "")


def _problem(code: str, tree: Optional[cst.Module] = None) -> Optional[str]:
    """Why ``code`` (the code of ``tree``) must not be written, or None."""
    try:
        ast.parse(code)
        reparsed = cst.parse_module(code)
    except (SyntaxError, ValueError, cst.ParserSyntaxError) as error:
        text = " ".join(str(error).split())
        return f"produced invalid Python ({text[:200]})"
    if reparsed.code != code:
        return "produced code that does not round-trip through libcst"
    if tree is not None and _shape(tree) != _shape(reparsed):
        # e.g. a node built without the parentheses its precedence needs:
        # the text parses, but into a different tree than the one the pass built.
        return "produced code that parses into a different tree than the one built"
    return None


def _check_rewrite(source: str, code: str, module: cst.Module, steps) -> None:
    """The output must parse with CPython and libcst, into the tree that was built."""
    problem = _problem(code, module)
    if problem is None:
        return
    if not _is_valid(source):
        # libcst took input that CPython rejects: the input is at fault, not a pass.
        ast.parse(source)
    culprit = "the rewrite"
    for name, tree in steps:
        if _problem(tree.code, tree) is not None:
            culprit = name
            break
    raise RewriteError(f"{culprit} {problem}")


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


def _is_valid(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _formatting_is_safe(source: str, code: str, formatted: str) -> bool:
    """Black may only touch the lines torchport changed, and never the meaning.

    Black's line ranges sometimes reach further (it re-indents a tab-indented
    block, drops form feeds): then the unformatted rewrite is written instead.
    """
    try:
        before, after = ast.parse(code), ast.parse(formatted)
    except (SyntaxError, ValueError):
        return False
    if ast.dump(before) != ast.dump(after):
        return False
    try:
        # A second run must be able to read it: libcst fails to reproduce some
        # whitespace-only lines after a block black re-indented from tabs.
        if cst.parse_module(formatted).code != formatted:
            return False
    except cst.ParserSyntaxError:
        return False
    old, new, out = (t.splitlines(keepends=True) for t in (source, code, formatted))
    untouched = set()
    for tag, i1, i2, j1, j2 in opcodes(old, new):
        if tag == "equal":
            untouched.update(range(j1, j2))
    kept = set()
    for tag, i1, i2, j1, j2 in opcodes(new, out):
        if tag == "equal":
            kept.update(range(i1, i2))
    return untouched <= kept
