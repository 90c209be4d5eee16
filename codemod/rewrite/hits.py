"""Which lines of a module can hold a site, found from its text before any parse
with libcst: each pass's trigger, the names imported from an API a pass cares about,
and the lines whose statement or function a pass must see whole."""

from __future__ import annotations

import ast
import bisect
import re
from typing import Iterable, List, Optional, Pattern, Sequence, Set, Tuple, Type

from codemod.passes.base import Pass
from codemod.passes.names import ModuleFacts

Span = Tuple[int, int]


def hit_lines(
    source: str,
    ends: Sequence[int],
    passes: Sequence[Type[Pass]],
    facts: ModuleFacts,
    spans: Optional[Sequence[Span]] = None,
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
    return matching_lines(source, ends, patterns, spans)


def context_lines(
    source: str,
    lines: Sequence[str],
    ends: Sequence[int],
    patterns: Sequence[Optional[Pattern[str]]],
    facts: ModuleFacts,
    spans: Optional[Sequence[Span]] = None,
) -> Set[int]:
    """Lines one of ``patterns`` (passes' ``CONTEXT`` or ``FUNCTION_CONTEXT``)
    matches as written, or with the imported names in them spelled out (``mark(...)``
    after ``from torch.cuda.nvtx import mark`` reads ``torch.cuda.nvtx.mark(...)``)."""
    given = [p for p in patterns if p is not None]
    if not given:
        return set()
    found = matching_lines(source, ends, given, spans)
    aliases = {
        local: target
        for local, target in facts.imports.items()
        if local != target and target.startswith("torch.")
    }
    if not aliases:
        return found
    alias = re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, aliases)))
    for number in matching_lines(source, ends, [alias], spans) - found:
        spelled = alias.sub(lambda m: aliases[m.group()], lines[number - 1])
        if any(p.search(spelled) for p in given):
            found.add(number)
    return found


def matching_lines(
    source: str,
    ends: Sequence[int],
    patterns: Iterable[Pattern[str]],
    spans: Optional[Sequence[Span]] = None,
) -> Set[int]:
    """The lines where a match of one of ``patterns`` starts, within ``spans``
    (offsets; None: the whole text). Each pattern scans the text once: one
    alternation of them all, or a scan line by line, defeats the regex engine's
    skipping ahead to a first character."""
    spans = [(0, len(source))] if spans is None else spans
    return {
        bisect.bisect_right(ends, match.start()) + 1
        for pattern in patterns
        for start, end in spans
        for match in pattern.finditer(source, start, end)
    }


def statement_spans(tree: ast.Module, ends: Sequence[int]) -> List[Span]:
    """The offsets (start, end) of each run of top-level statements on adjacent
    lines: a line outside them (a comment between two functions) is in no
    statement, so no chunk needs its hits, and a file of comments costs no step a
    comment."""
    spans: List[Span] = []
    for stmt in tree.body:
        first = min(
            [stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])]
        )
        start = ends[first - 2] if first > 1 else 0
        end = ends[(stmt.end_lineno or stmt.lineno) - 1]
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    return spans
