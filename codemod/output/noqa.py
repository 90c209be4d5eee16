"""``# noqa`` comments as the migration workflow sees them: where each is and which
codes it names (only real comments: ``"# noqa"`` in a string is none), which
lines can take one, and a line with codes added to its comment.

TP000 (``unused-noqa``) is not a rule of the registry: it is what ``--unused-noqa``
reports, Ruff's RUF100 for torchport's codes. Only ``TP`` codes are judged: a
``# noqa`` without codes, or with another tool's codes (``E501``), belongs to
that tool as much as to torchport and is never called unused.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

UNUSED_NOQA = "TP000"
UNUSED_NOQA_NAME = "unused-noqa"
UNUSED_NOQA_MESSAGE = "`# noqa` directive that suppresses no torchport site"
UNUSED_NOQA_DOC = (
    "Reported with `--unused-noqa` (Ruff's RUF100, for torchport's codes): a"
    " `# noqa: TPxxx` whose code matches no site on its line, or names a rule"
    " that is not enabled or does not exist. Remove the code (or the comment);"
    " `# noqa` without codes and other tools' codes are never reported."
)
NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE
)
# IPython lines, masked before tokenizing a notebook cell.
_MAGIC = re.compile(r"^[ \t]*[%!?]")


@dataclass(frozen=True)
class Directive:
    line: int
    col: int  # 1-based column of the "#"
    codes: Tuple[str, ...]  # upper case, in the order written; () for a bare noqa


@dataclass
class Lines:
    """What tokenizing a source says about its lines."""

    comments: Dict[int, Tuple[int, str]]  # line -> (0-based column, comment text)
    blocked: Set[int]  # lines that end inside a string or a continuation


def scan(source: str) -> Optional[Lines]:
    """The comments of ``source`` and the lines that cannot take one; None when
    it does not tokenize."""
    masked = "".join(
        "pass\n" if _MAGIC.match(line) else line
        for line in source.splitlines(keepends=True)
    )
    comments: Dict[int, Tuple[int, str]] = {}
    blocked: Set[int] = set()
    open_strings: List[int] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(masked).readline):
            kind = tokenize.tok_name[token.type]
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = (token.start[1], token.string)
            elif kind == "FSTRING_START":
                open_strings.append(token.start[0])
            elif kind == "FSTRING_END" and open_strings:
                blocked.update(range(open_strings.pop(), token.end[0]))
            elif token.start[0] != token.end[0] and token.type == tokenize.STRING:
                blocked.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    for number, line in enumerate(masked.splitlines(), start=1):
        code = line[: comments[number][0]] if number in comments else line
        if code.rstrip().endswith("\\"):
            blocked.add(number)
    return Lines(comments, blocked)


def directives(source: str) -> List[Directive]:
    """Every ``# noqa`` comment of ``source``."""
    if "noqa" not in source.lower():
        return []
    lines = scan(source)
    if lines is None:
        return []
    found = []
    for number, (col, text) in sorted(lines.comments.items()):
        match = NOQA.search(text)
        if match:
            codes = re.split(r"[\s,]+", match.group("codes") or "")
            found.append(
                Directive(
                    number,
                    col + match.start() + 1,
                    tuple(c.upper() for c in codes if c),
                )
            )
    return found


def with_codes(
    line: str, comment: Optional[Tuple[int, str]], codes: Iterable[str]
) -> str:
    """``line`` (with its line ending) whose ``# noqa`` names ``codes`` too: an
    existing ``# noqa: X`` gets them added, else ``  # noqa: CODES`` ends it."""
    body = line.rstrip("\r\n")
    ending = line[len(body) :]
    codes = list(codes)
    if comment is not None:
        col, text = comment
        match = NOQA.search(text)
        if match and match.group("codes"):
            old = [c.upper() for c in re.split(r"[\s,]+", match.group("codes")) if c]
            merged = old + [c for c in codes if c not in old]
            start = col + match.start()
            end = col + match.end()
            return body[:start] + "# noqa: " + ", ".join(merged) + body[end:] + ending
    return body.rstrip() + "  # noqa: " + ", ".join(codes) + ending


def cell_sources(text: str) -> Dict[int, str]:
    """A notebook's code cells by number (every cell counted from 1): their source."""
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError, RecursionError):
        return {}
    found = {}
    for number, cell in enumerate(cells if isinstance(cells, list) else [], start=1):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            found[number] = "".join(source) if isinstance(source, list) else str(source)
    return found


def unused_codes(
    directive: Directive, found: Iterable[str], enabled, known: Iterable[str]
) -> List[str]:
    """The TP codes of ``directive`` no site ``found`` on its line matches, each
    as ``unused: TPxxx``, ``non-enabled: TPxxx`` or ``unknown: TPxxx``."""
    found = list(found)
    known = list(known)
    out = []
    for code in directive.codes:
        if not code.startswith("TP") or any(f.startswith(code) for f in found):
            continue
        if not any(k.startswith(code) for k in known):
            out.append(f"unknown: {code}")
        elif not any(enabled(k) for k in known if k.startswith(code)):
            out.append(f"non-enabled: {code}")
        else:
            out.append(f"unused: {code}")
    return out


# The word made inert, every position kept: the file then shows what it suppresses.
INERT = re.compile(rb"noqa", re.IGNORECASE)


def sites_under_noqa(path: Path, data: bytes, options) -> Dict[Tuple, Set[str]]:
    """(cell, line) -> the codes of the sites torchport finds there when no
    ``# noqa`` counts: the file processed once more with its ``noqa`` comments
    made inert. The sites on a comment's line are the ones it suppresses."""
    from codemod.run.job import CHECK, Job
    from codemod.run.process import process_source

    inert = INERT.sub(b"n_qa", data)
    rerun = process_source(str(path), inert, Job(CHECK, options, False), path)
    sites: Dict[Tuple, Set[str]] = {}
    for d in rerun.diagnostics:
        sites.setdefault((d.cell, d.line), set()).add(d.code)
    return sites


def suppressed_here(directive: Directive, found: Iterable[str]) -> List[str]:
    """The codes of the sites ``found`` on a directive's line that it suppresses:
    all of them for a bare ``# noqa``, else those its codes (or prefixes) name."""
    if not directive.codes:
        return sorted(found)
    return sorted(f for f in found if any(f.startswith(c) for c in directive.codes))
