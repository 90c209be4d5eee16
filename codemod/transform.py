"""Rewrite one module's source text: parse, run the passes, insert the binding, check."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import List, Sequence, Type

import libcst as cst
from libcst.metadata import MetadataWrapper

from codemod.binding import binding_statement, insert_binding, plan_binding
from codemod.diagnostics import Diagnostic
from codemod.formatting import format_changed, line_map
from codemod.passes import PASSES
from codemod.passes.base import FileContext, Options, Pass


class RewriteError(Exception):
    """The rewrite produced something torchport will not write."""


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
    context = FileContext(options, source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    plan_binding(wrapper, context)
    for pass_class in passes:
        if not pass_class.TRIGGER.search(source):
            continue
        transformer = pass_class(context)
        result = wrapper.visit(transformer)
        if transformer.changed:
            wrapper = MetadataWrapper(result, unsafe_skip_copy=True)
    module = insert_binding(wrapper.module, context)
    code = module.code
    if code != source:
        _check_valid(code, passes)
        if format_mode is not None:
            keep = binding_statement(context, module.default_newline)
            formatted = format_changed(source, code, format_mode, keep)
            if formatted != code and _is_valid(formatted):
                code = formatted
    diagnostics = sorted(context.diagnostics, key=lambda d: (d.line, d.col, d.code))
    if positions == "output" and code != source:
        mapping = line_map(source, code)
        diagnostics = [_moved(d, mapping) for d in diagnostics]
    return Rewrite(source, code, diagnostics)


def _moved(diagnostic: Diagnostic, mapping: List[int]) -> Diagnostic:
    from dataclasses import replace

    line = mapping[diagnostic.line] if diagnostic.line < len(mapping) else diagnostic.line
    return replace(diagnostic, line=line)


def _is_valid(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _check_valid(code: str, passes: Sequence[Type[Pass]]) -> None:
    """The output must parse with both CPython and libcst, and round-trip."""
    try:
        ast.parse(code)
        reparsed = cst.parse_module(code)
    except (SyntaxError, ValueError, cst.ParserSyntaxError) as error:
        names = ", ".join(p.__name__ for p in passes)
        raise RewriteError(f"rewrite produced invalid Python ({error}); passes: {names}")
    if reparsed.code != code:
        raise RewriteError("rewrite does not round-trip through libcst")
