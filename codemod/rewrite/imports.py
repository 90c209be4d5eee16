"""Imports a rewrite made unused, removed once the passes have run.

A pass that rewrites the last use of an imported name schedules its import
(``Pass.drop_import_if_unused``); it is removed only if nothing refers to it any
more. Most files need no scope analysis: ``ast`` proves the name unread and the
import statement alone goes through a small remover laid out as libcst's
``RemoveImportsVisitor`` lays it out.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Set, Tuple

from codemod.model.lines import split_lines
from codemod.rewrite import standin
from codemod.rewrite.chunks import blocks, splice
from codemod.passes.names import dotted_name

if TYPE_CHECKING:  # pragma: no cover
    from codemod.passes.base import FileContext


def remove_unused(
    code: str, context: "FileContext", mapping: Dict[int, int], aside=frozenset()
) -> str:
    """The imports passes scheduled (``Pass.drop_import_if_unused``), if nothing
    references them any more. This needs the whole module and a scope analysis, so
    it runs only in the few files where a pass asked."""
    if not context.unused_imports:
        return code
    quick = _remove_quickly(code, context, mapping, aside)
    if quick is not None:
        return quick
    import libcst as cst
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import RemoveImportsVisitor
    from libcst.metadata import PositionProvider

    try:
        module = cst.parse_module(code)
    except cst.ParserSyntaxError:
        return code  # reported by the validity check that follows

    # Lines were recorded in the input; the binding may have moved them since.
    lines = {mapping.get(line, line) for line, *_ in context.unused_imports if line}
    anywhere = any(line is None for line, *_ in context.unused_imports)

    class Remover(RemoveImportsVisitor):
        """Only the import statements passes named (by line), never a user's other
        unused imports of the same name."""

        METADATA_DEPENDENCIES = (
            *RemoveImportsVisitor.METADATA_DEPENDENCIES,
            PositionProvider,
        )

        def _named(self, node: cst.CSTNode) -> bool:
            if anywhere:
                return True
            return self.get_metadata(PositionProvider, node).start.line in lines

        def leave_Import(self, original_node, updated_node):
            if not self._named(original_node):
                return updated_node
            return super().leave_Import(original_node, updated_node)

        def leave_ImportFrom(self, original_node, updated_node):
            if not self._named(original_node):
                return updated_node
            return super().leave_ImportFrom(original_node, updated_node)

        def leave_IndentedBlock(self, original_node, updated_node):
            # A block that lost its first statement must not start with a blank line.
            body = updated_node.body
            if 0 < len(body) < len(original_node.body) and not body[0].deep_equals(
                original_node.body[0]
            ):
                lines = list(body[0].leading_lines)
                while lines and lines[0].comment is None:
                    lines.pop(0)
                body = [body[0].with_changes(leading_lines=lines), *body[1:]]
            return updated_node.with_changes(body=body)

    removals: List[Tuple[str, Optional[str], Optional[str]]] = [
        (module_name, obj, asname)
        for _, module_name, obj, asname in context.unused_imports
    ]
    return Remover(CodemodContext(), removals).transform_module(module).code


def _remove_quickly(
    code: str, context: "FileContext", mapping: Dict[int, int], aside=frozenset()
) -> Optional[str]:
    """``remove_unused`` without parsing the whole module with libcst, where ``ast``
    proves each name unused: an import whose name no code reads (no ``Name``,
    ``global`` or string says it). The statement alone, with the comments
    and blank lines libcst gives it, goes through libcst's import remover; None
    (not proven) leaves the whole-module way to decide."""
    try:
        tree = ast.parse(standin.view(code, aside))  # ``aside``: the input's data
    except (SyntaxError, ValueError):
        return None
    read: Set[str] = set()
    strings: List[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            read.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            read.update(node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.append(node.value)
    by_line: Dict[int, List[Tuple[str, Optional[str], Optional[str]]]] = {}
    for line, module_name, obj, asname in context.unused_imports:
        local = asname or obj
        if local is None or local in read:
            return None
        if any(_names_in_string(text, local) for text in strings):
            return None
        removal = (module_name, obj, asname)
        found = [mapping.get(line, line)] if line else _importing(tree, removal)
        if not found:
            return None
        for number in found:
            by_line.setdefault(number, []).append(removal)

    lines = split_lines(code)
    newline = "\r\n" if lines[0].endswith("\r\n") else "\n"
    edits = []
    for line, removals in by_line.items():
        found = _statement_at(tree.body, line)
        # The module's first statement is left to libcst: its comments may be the
        # module's header.
        if found is None or (found[0] is tree.body and found[1] == 0):
            return None
        body, index = found
        stmt = body[index]
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return None
        end = stmt.end_lineno or stmt.lineno
        after = body[index + 1] if index + 1 < len(body) else None
        if after is None and index == 0:
            return None  # its block would be left empty
        if after and after.lineno <= end:
            return None  # shares a line with another statement
        if index:
            if (body[index - 1].end_lineno or 0) >= line:
                return None
            first = (body[index - 1].end_lineno or 0) + 1
        else:  # after its block's header: the comments and blank lines above it
            first = line
            while first > 1 and lines[first - 2].strip()[:1] in ("", "#"):
                first -= 1
        original = lines[first - 1 : end]
        indent = lines[line - 1][: stmt.col_offset]
        if indent.strip() or any(
            t.strip() and not t.startswith(indent) for t in original
        ):
            return None
        old = "".join(t[len(indent) :] if t.strip() else t for t in original)
        edited = _remove_in_statement("pass" + newline + old, removals)
        if edited is None or not edited.startswith("pass" + newline):
            return None
        new = edited[len("pass" + newline) :]
        replacement = splice(original, old, new, indent, context.indent_unit)
        if index == 0 and not new:
            # Its block must not start with a blank line now (as libcst's remover
            # leaves it): the next statement's blank lines above its comments go.
            while end < len(lines) and not lines[end].strip():
                end += 1
        edits.append((first, end, replacement))
    for first, end, replacement in sorted(edits, reverse=True):
        lines[first - 1 : end] = replacement
    return "".join(lines)


def _statement_at(
    body: Sequence[ast.stmt], line: int
) -> Optional[Tuple[Sequence[ast.stmt], int]]:
    """The block holding the statement that starts on ``line``, and its index."""

    for index, stmt in enumerate(body):
        if stmt.lineno == line:
            return body, index
        if not stmt.lineno < line <= (stmt.end_lineno or stmt.lineno):
            continue
        for block in blocks(stmt):
            found = _statement_at(block, line)
            if found is not None:
                return found
    return None


def _names_in_string(text: str, name: str) -> bool:
    """Whether a string may name ``name`` to Python: an ``__all__`` entry, or an
    annotation written as a string that reads it."""
    if name not in text:
        return False
    if text.strip() == name:
        return True
    try:
        expression = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(expression))


def _importing(tree: ast.Module, removal) -> List[int]:
    """The lines of the imports of ``removal`` (module, name, alias) anywhere."""
    module_name, obj, asname = removal
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            if node.module != module_name:
                continue
            names = [(a.name, a.asname) for a in node.names]
            if (obj, asname) in names:
                found.append(node.lineno)
        elif isinstance(node, ast.Import) and obj is None:
            if (module_name, asname) in [(a.name, a.asname) for a in node.names]:
                found.append(node.lineno)
    return found


def _remove_in_statement(text: str, removals) -> Optional[str]:
    """``text`` (one import statement after a ``pass``) without the ``removals``
    (module, name, alias), laid out as libcst's ``RemoveImportsVisitor`` lays it
    out. ``ast`` proved the names unused, so no scope analysis is needed, and
    ``libcst.codemod`` (a quarter of a second to import) stays unimported."""
    import libcst as cst

    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return None
    remover = _statement_import_remover()(removals)
    edited = module.visit(remover)
    return None if remover.refused else edited.code


@lru_cache(maxsize=None)
def _statement_import_remover():
    """The remover's class, made on first use: it subclasses a libcst class."""
    import libcst as cst

    def merged(left, right):
        """The whitespace after a kept comma, given the removed comma's: comment
        lines below the removed name move up to the kept one."""
        if not isinstance(right, cst.ParenthesizedWhitespace):
            return left
        if not isinstance(left, cst.ParenthesizedWhitespace):
            return right
        kept = tuple(line for line in right.empty_lines if line.comment is not None)
        return left.with_changes(empty_lines=kept)

    class Remover(cst.CSTTransformer):
        def __init__(self, removals) -> None:
            super().__init__()
            self.removals = set(removals)
            self.refused = False

        def leave_Import(self, original_node, updated_node):
            keep = [
                alias
                for alias in updated_node.names
                if (alias.evaluated_name, None, alias.evaluated_alias)
                not in self.removals
            ]
            return self._kept(updated_node, updated_node.names, keep, {})

        def leave_ImportFrom(self, original_node, updated_node):
            names = updated_node.names
            if isinstance(names, cst.ImportStar):
                return updated_node
            if updated_node.relative:
                self.refused = True  # the package is unknown here
                return updated_node
            module_name = dotted_name(updated_node.module)
            keep, changes = [], {}
            for alias in names:
                removal = (module_name, alias.evaluated_name, alias.evaluated_alias)
                if removal not in self.removals:
                    keep.append(alias)
                    continue
                # Comments after the removed name's comma stay, on the name
                # (or parenthesis) before it.
                if not isinstance(alias.comma, cst.Comma):
                    continue
                after = alias.comma.whitespace_after
                if keep:
                    previous = keep[-1]
                    if isinstance(previous.comma, cst.Comma):
                        previous = previous.with_deep_changes(
                            previous.comma,
                            whitespace_after=merged(
                                previous.comma.whitespace_after, after
                            ),
                        )
                    else:
                        previous = previous.with_changes(comma=alias.comma)
                    keep[-1] = previous
                elif isinstance(updated_node.lpar, cst.LeftParen):
                    lpar = changes.get("lpar", updated_node.lpar)
                    changes["lpar"] = lpar.with_changes(
                        whitespace_after=merged(lpar.whitespace_after, after)
                    )
            return self._kept(updated_node, names, keep, changes)

        def _kept(self, node, names, keep, changes):
            if len(keep) == len(names):
                return node
            if not keep:
                return cst.RemoveFromParent()
            if keep[-1] is not names[-1]:  # no trailing comma after the last name
                keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return node.with_changes(names=keep, **changes)

    return Remover
