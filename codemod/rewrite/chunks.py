"""The statements worth parsing with libcst, and how to put them back.

CPython's ``ast`` parses a file about five times faster than libcst. It finds the
statements whose lines can hold a site (a "chunk"): the smallest statement that
contains such a line, descending into class and function bodies. Only chunks are
parsed with libcst, rewritten and formatted; every other byte of the file is kept
as it was. A chunk nested in a body is dedented before parsing and re-indented on
the way back; lines the rewrite did not change are copied from the original.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Set, Tuple

from codemod.model.lines import LineSet, split_lines
from codemod.rewrite.linediff import opcodes

Span = Tuple[int, int]  # first and last line, 1-based, inclusive


@dataclass
class Chunk:
    start: int
    end: int
    indent: str  # removed from every line before parsing
    top: Span  # the enclosing top-level statement(s), to fall back to
    # The ``ast`` statements the chunk is made of (codemod.rewrite.traversal skips those of
    # their nested statements that hold no hit).
    statements: List[ast.stmt] = field(default_factory=list, compare=False)
    # The chunk ends its block: an early exit in it has everything it guards in view.
    to_end: bool = field(default=False, compare=False)

    def dedented(self, lines: Sequence[str]) -> Optional[str]:
        """The chunk's text without its indentation, or None when a line (say, in a
        multi-line string) is indented less than the chunk."""
        width = len(self.indent)
        out = []
        for line in lines[self.start - 1 : self.end]:
            if line.startswith(self.indent):
                out.append(line[width:])
            elif line.strip():
                return None
            else:
                out.append(line)
        return "".join(out)


def first_line(stmt: ast.stmt) -> int:
    """The statement's first line, its decorators included."""
    return min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])


def _span(stmt: ast.stmt) -> Span:
    return first_line(stmt), stmt.end_lineno or stmt.lineno


def _groups(body: Sequence[ast.stmt]) -> List[Tuple[Span, List[ast.stmt]]]:
    """Statements of a body grouped so that no two groups share a line (``a; b``)."""
    groups: List[Tuple[Span, List[ast.stmt]]] = []
    for stmt in body:
        start, end = _span(stmt)
        if groups and start <= groups[-1][0][1]:
            (first, last), members = groups[-1]
            groups[-1] = ((first, max(last, end)), members + [stmt])
        else:
            groups.append(((start, end), [stmt]))
    return groups


def _bodies(stmt: ast.stmt, lines: Sequence[str]) -> List[List[ast.stmt]]:
    """The statement lists nested in ``stmt`` that can be chunks on their own.

    An ``elif`` branch is not one: its text does not parse without its ``if``; nor
    is a body on its header's line (``case "cuda": return "nccl"``, ``else: x = 1``):
    its statements do not start a line of their own.
    """
    bodies = [getattr(stmt, "body", None), getattr(stmt, "finalbody", None)]
    orelse = getattr(stmt, "orelse", None)
    is_elif = (
        isinstance(stmt, ast.If)
        and orelse
        and len(orelse) == 1
        and isinstance(orelse[0], ast.If)
        and lines[orelse[0].lineno - 1].lstrip().startswith("elif")
    )
    bodies.append(None if is_elif else orelse)
    bodies += [h.body for h in getattr(stmt, "handlers", [])]
    bodies += [c.body for c in getattr(stmt, "cases", [])]
    return [
        b
        for b in bodies
        if b
        and isinstance(b, list)
        and isinstance(b[0], ast.stmt)
        and _starts_line(b[0], lines)
    ]


def _starts_line(stmt: ast.stmt, lines: Sequence[str]) -> bool:
    """Whether nothing but indentation comes before ``stmt`` on its line."""
    line = lines[stmt.lineno - 1].encode("utf-8")  # col_offset counts UTF-8 bytes
    return not line[: stmt.col_offset].strip()


def select(
    tree: ast.Module,
    hits: Set[int],
    lines: Sequence[str],
    whole: Set[int] = frozenset(),
    whole_function: Set[int] = frozenset(),
    alone: Set[int] = frozenset(),
) -> List[Chunk]:
    """The chunks covering every line in ``hits``, in file order; a line in
    ``whole`` makes its whole top-level statement one chunk, a line in
    ``whole_function`` the function around it (its top-level statement if none).
    A top-level statement starting on a line of ``alone`` (the one that becomes the
    device binding), or an import, is never in a chunk with others."""
    hits = set(hits) | set(whole) | set(whole_function)
    return _select(tree.body, hits, lines, whole, None, whole_function, alone)


def narrow(chunk: Chunk, changed: Set[int], lines: Sequence[str]) -> List[Chunk]:
    """The smallest statements of ``chunk`` that hold every line in ``changed``: a
    rewrite is checked, formatted and spliced statement by statement, not as the
    whole function whose header put it in one chunk. Empty when some line of
    ``changed`` is in none of them."""
    found = _select(chunk.statements, changed, lines, frozenset(), chunk.top)
    covered = {line for c in found for line in range(c.start, c.end + 1)}
    return found if changed <= covered else []


def _select(
    body: Sequence[ast.stmt],
    hits: Set[int],
    lines: Sequence[str],
    whole: Set[int],
    top: Optional[Span],
    whole_function: Set[int] = frozenset(),
    alone: Set[int] = frozenset(),
) -> List[Chunk]:
    chunks: List[Chunk] = []
    # The hits of a statement in logarithmic time, not a scan of them all each.
    ordered, whole_lines = LineSet(hits), LineSet(whole)

    def apart(members: Sequence[ast.stmt]) -> bool:
        """Never in a run: a compound statement (a run is for guards to share
        one `if`; a run of functions would be one chunk of a whole file), an
        import, or the statement that becomes the binding."""
        return any(
            isinstance(m, (*_COMPOUND, ast.Import, ast.ImportFrom))
            or first_line(m) in alone
            for m in members
        )

    def walk(body: Sequence[ast.stmt], top: Optional[Span]) -> None:
        run = False  # the last statement of this body became the last chunk
        groups = _groups(body)
        for index, (span, members) in enumerate(groups):
            here = ordered.between(*span)
            if not here:
                run = False
                continue
            enclosing = top or span
            bodies = _bodies(members[0], lines) if len(members) == 1 else []
            if (top is None and whole_lines.any_between(*span)) or _function_needed(
                members, top, {line for line in here if line in whole_function}
            ):
                bodies = []  # a pass needs this statement whole
            inner = {line for b in bodies for s in b for line in range(*_span_range(s))}
            if bodies and all(
                line in inner or _between_statements(line, bodies, lines)
                for line in here
            ):
                for nested in bodies:
                    walk(nested, enclosing)
                run = False
                continue
            # A run of simple statements with sites is one chunk (one `if` can
            # guard it); see `apart` for what never joins one.
            if run and not apart(members):
                chunks[-1].end = span[1]
                chunks[-1].statements.extend(members)
                if top is None:
                    chunks[-1].top = (chunks[-1].start, span[1])
            else:
                line = lines[span[0] - 1]
                indent = line[: len(line) - len(line.lstrip(" \t"))]
                chunks.append(Chunk(span[0], span[1], indent, enclosing, list(members)))
                run = not apart(members)
            if top is not None and any(_early_exit(m, lines) for m in members):
                # What an early exit guards is the rest of its block: in view.
                for _, rest in groups[index + 1 :]:
                    chunks[-1].statements.extend(rest)
                chunks[-1].end = groups[-1][0][1]
                chunks[-1].to_end = True
                return
            chunks[-1].to_end = top is not None and index == len(groups) - 1

    walk(body, top)
    chunks.sort(key=lambda c: c.start)
    return chunks


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPOUND = (
    *_FUNCTIONS,
    ast.ClassDef,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    *((ast.TryStar,) if hasattr(ast, "TryStar") else ()),
    *((ast.Match,) if hasattr(ast, "Match") else ()),
)


def _function_needed(
    members: Sequence[ast.stmt], top: Optional[Span], needed: Set[int]
) -> bool:
    """A line of ``needed`` is in this statement and in no function nested in it:
    the statement is that line's function, or its top-level statement."""
    if not needed or len(members) != 1:
        return bool(needed) and top is None
    stmt = members[0]
    if top is not None and not isinstance(stmt, _FUNCTIONS):
        return False
    spans = [_span(d) for d in _nested_functions(stmt)]
    return any(not any(a <= line <= b for a, b in spans) for line in needed)


def blocks(stmt: ast.stmt) -> List[List[ast.stmt]]:
    """The statement lists nested in ``stmt``, in source order: its body, its
    handlers' and cases' bodies, ``else``, ``finally``."""
    found = [getattr(stmt, "body", [])]
    found += [h.body for h in getattr(stmt, "handlers", [])]
    found += [c.body for c in getattr(stmt, "cases", [])]
    found += [getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])]
    return [b for b in found if isinstance(b, list)]


def _nested_functions(stmt: ast.stmt) -> List[ast.stmt]:
    """The functions defined in ``stmt``'s bodies, at any depth (statements only)."""
    found: List[ast.stmt] = []
    for block in blocks(stmt):
        for child in block:
            if isinstance(child, _FUNCTIONS):
                found.append(child)
            found.extend(_nested_functions(child))
    return found


def _early_exit(stmt: ast.stmt, lines: Sequence[str]) -> bool:
    """An availability check that ends its block early: ``assert`` or an ``if``
    without ``else`` whose body leaves (returns, raises, breaks, continues, or ends
    in a call such as ``sys.exit()``), testing ``is_available``."""
    if isinstance(stmt, ast.If) and not stmt.orelse:
        last = stmt.body[-1]
        leaves = isinstance(last, (ast.Return, ast.Raise, ast.Break, ast.Continue))
        if not leaves and not (
            isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
        ):
            return False
    elif not isinstance(stmt, ast.Assert):
        return False
    test = stmt.test
    text = "".join(lines[test.lineno - 1 : (test.end_lineno or test.lineno)])
    return "is_available" in text


def _between_statements(
    number: int, bodies: Sequence[Sequence[ast.stmt]], lines: Sequence[str]
) -> bool:
    """A comment or blank line among the statements of ``bodies`` (not in any of
    them, not in the header above them): it holds no site, so it does not make the
    whole enclosing statement a chunk (a `# see cuda.html` in a long ``main()``)."""
    text = lines[number - 1].strip()
    if text and not text.startswith("#"):
        return False
    return number > min(first_line(b[0]) for b in bodies)


def top_level(tree: ast.Module, span: Span) -> Chunk:
    """The chunk of the top-level statements within ``span``."""
    members = [s for s in tree.body if span[0] <= _span(s)[0] <= span[1]]
    return Chunk(span[0], span[1], "", span, members)


def _span_range(stmt: ast.stmt) -> Tuple[int, int]:
    first, last = _span(stmt)
    return first, last + 1


BLACK_INDENT = "    "  # black's indentation step, and libcst's for a new block


def indent_unit(tree: ast.Module, lines: Sequence[str]) -> str:
    """The file's indentation step: what its first block written on lines of its
    own adds to its header's indentation (black's four spaces when none says)."""
    for stmt in ast.walk(tree):
        body = getattr(stmt, "body", None)
        if not isinstance(stmt, ast.stmt) or not isinstance(body, list) or not body:
            continue
        if body[0].lineno == stmt.lineno:  # `if x: y`
            continue
        header, first = lines[stmt.lineno - 1], lines[body[0].lineno - 1]
        outer = header[: len(header) - len(header.lstrip(" \t"))]
        inner = first[: len(first) - len(first.lstrip(" \t"))]
        if inner.startswith(outer) and len(inner) > len(outer):
            return inner[len(outer) :]
    return BLACK_INDENT


def _code_lines(text: str) -> Optional[Set[int]]:
    """0-based lines of ``text`` that start with code (not inside a string), or None
    when ``text`` does not tokenize."""
    starts: Set[int] = set()
    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    skip.add(getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING))
    skip.discard(tokenize.STRING)
    lines = split_lines(text)
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            row, col = token.start
            if token.type in skip or row > len(lines):
                continue
            line = lines[row - 1]
            if col == len(line) - len(line.lstrip(" \t")):
                starts.add(row - 1)
    except (tokenize.TokenError, SyntaxError):
        return None
    return starts


def _in_file_unit(line: str, unit: str) -> str:
    """``line`` with each of black's indentation steps at its start written as ``unit``."""
    body = line.lstrip(" \t")
    leading = line[: len(line) - len(body)]
    return leading.replace(BLACK_INDENT, unit) + body


def splice(
    original: Sequence[str],
    old: str,
    new: str,
    indent: str,
    unit: str = BLACK_INDENT,
) -> List[str]:
    """The chunk's new lines: unchanged lines byte for byte from ``original``, changed
    and added ones re-indented.

    In a tab-indented file (``unit``), the indentation black and libcst write in
    spaces becomes tabs; lines inside strings keep theirs.
    """
    a, b = split_lines(old), split_lines(new)
    code = _code_lines(new) if unit == "\t" else None
    out: List[str] = []
    for tag, i1, i2, j1, j2 in opcodes(a, b):
        if tag == "equal":
            out.extend(original[i1:i2])
            continue
        for offset, line in enumerate(b[j1:j2]):
            old_index = i1 + offset
            if tag == "replace" and old_index < i2 and not line.strip():
                if not original[old_index].strip():
                    # A blank line black tidied (trailing spaces): keep the original.
                    out.append(original[old_index])
                    continue
            if code is not None and j1 + offset in code:
                line = _in_file_unit(line, unit)
            out.append(indent + line if line.strip() else line)
    return out
