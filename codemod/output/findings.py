"""What a run found, as the output formats take it: each diagnostic, each file
torchport could not process (``Problem``), and each fix's edits (``Edit``).

Every format is complete on its own: diagnostics and problems are both records, so
``--output-format json`` alone tells a program everything the run found. File
names and messages are shown ``printable``: no control character can forge another
record or rewrite the terminal. Apart from the formats so that each of them, and
the report, builds on the same records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING, Dict, List, Optional

from codemod.model.text import printable, printable_path
from codemod.run.job import WRITE

if TYPE_CHECKING:
    from codemod.model.diagnostic import Diagnostic


# What no output may hold as it is. Python holds each byte of a file name that is
# not valid UTF-8 as a lone surrogate (U+DC80..U+DCFF, "surrogateescape"): no
# encoder takes those, and byte 0x9B written raw is a terminal's CSI. The C1
# controls (U+0080..U+009F) are commands to a terminal too. The bidirectional
# controls (U+202A..U+202E, U+2066..U+2069, the marks U+200E, U+200F, U+061C)
# reorder what a terminal or a browser shows, so that a line reads otherwise than
# it is ("Trojan Source").
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_HIDDEN = re.compile(f"[\ud800-\udfff\x80-\x9f{BIDI_CONTROLS}]")


def _escape(match: "re.Match[str]") -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # the byte of a name: that byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with each byte of a name that is not valid UTF-8 written as
    ``\\xff``, and each C1 or bidirectional control as ``\\x9b`` or
    ``\\u202e``: any output encoding, any strict JSON parser and any terminal
    takes the result, and it reads as it is."""
    return _HIDDEN.sub(_escape, text) if _HIDDEN.search(text) else text


_SURROGATE = re.compile("[\ud800-\udfff]")


def exact_name(path: str) -> str:
    """A file name for a machine (the ``filename`` of a JSON record): as it is,
    but for each byte that is not valid UTF-8, written ``\\xff`` (a JSON string
    holds text, and strict parsers refuse a lone surrogate). JSON escapes the
    controls itself (``\\u001b``, ``\\u202e``): no raw byte reaches the output."""
    return _SURROGATE.sub(_escape, path) if _SURROGATE.search(path) else path


@dataclass(frozen=True)
class Problem:
    """A path torchport could not process: unreadable, unparsable, or a bug."""

    path: str
    message: str  # one line, without the path
    kind: str  # "io-error" | "parse-error" | "internal-error"
    line: Optional[int] = None

    @property
    def text(self) -> str:
        """``path: reason``; in a notebook ``path:cell N: reason``."""
        in_cell = self.path.endswith(".ipynb") and self.message.startswith("cell ")
        separator = "" if in_cell else " "
        shown = f"{printable_path(self.path)}:{separator}{printable(self.message)}"
        return visible(shown)


_KINDS = (
    ("internal error", "internal-error"),
    ("cannot rewrite", "internal-error"),
    ("worker process died", "internal-error"),
    ("cannot parse", "parse-error"),
    ("cannot decode", "parse-error"),
)
_LINE = re.compile(r"\bline (\d+)\b")


def problems_of(path: str, error: str) -> List[Problem]:
    """The ``path: reason`` error line(s) of one file as records (a notebook may
    join several with '; ')."""
    parts = [error]
    if path.endswith(".ipynb"):
        parts = [p for p in re.split(rf"; (?={re.escape(path)}:)", error) if p]
    found = []
    for part in parts:
        message = (
            part[len(path) :].lstrip(":").lstrip() if part.startswith(path) else part
        )
        kind = next((k for words, k in _KINDS if words in message), "io-error")
        line = _LINE.search(message)
        found.append(Problem(path, message, kind, int(line.group(1)) if line else None))
    return found


@dataclass(frozen=True)
class Edit:
    """Replace lines ``start`` up to (not including) ``end`` with ``content``."""

    start: int
    end: int
    content: str
    removed: str = ""  # the lines replaced, as they were


def edits_of(diff: str) -> List[Edit]:
    """The changed blocks of a unified diff, as edits of the old file's lines."""
    edits: List[Edit] = []
    old_line = 0
    start: Optional[int] = None
    added: List[str] = []
    removed: List[str] = []

    def close() -> None:
        nonlocal start, added, removed
        if start is not None:
            end = start + len(removed)
            edits.append(Edit(start, end, "".join(added), "".join(removed)))
        start, added, removed = None, [], []

    lines = diff.splitlines(keepends=True)
    for index, line in enumerate(lines):
        previous = lines[index - 1] if index else ""
        if line.startswith("@@"):
            close()
            old_line = int(re.match(r"@@ -(\d+)", line).group(1))
            if ",0 " in line.split("+")[0]:  # an insertion before the first line
                old_line += 1
        elif line.startswith(("---", "+++")) and start is None and not added:
            continue
        elif line.startswith("-"):
            start = old_line if start is None else start
            removed.append(line[1:])
            old_line += 1
        elif line.startswith("+"):
            start = old_line if start is None else start
            added.append(line[1:])
        elif line.startswith("\\"):
            # "\ No newline at end of file" after the line it is about.
            if previous.startswith("+") and added:
                added[-1] = added[-1].rstrip("\n")
            elif previous.startswith("-") and removed:
                removed[-1] = removed[-1].rstrip("\n")
        else:
            close()
            old_line += 1
    close()
    return edits


@dataclass
class Findings:
    """What a run shows: its diagnostics, its problems, and how it ran."""

    diagnostics: List[Diagnostic]
    problems: List[Problem] = field(default_factory=list)
    mode: str = WRITE
    edits: Dict[str, List[Edit]] = field(default_factory=dict)  # path -> change blocks
    strict: bool = False

    def fails(self, d: Diagnostic) -> bool:
        """Whether ``d`` fails this run: a site left that fails the check, or
        (not writing) one a fix would rewrite, since its file would change."""
        if d.applied:
            return self.mode != WRITE
        return d.severity != "info" or self.strict

    def state(self, d: Diagnostic) -> str:
        if d.applied:
            return "rewritten" if self.mode == WRITE else "would-rewrite"
        return "reported"

    def edits_for(self, d: Diagnostic) -> List[Edit]:
        """The change blocks that carry the fix of ``d`` (input lines; check/diff).

        Blocks that touch no site (the device binding, imports) go with the first
        fixed site of the file, so applying every site's edits gives the rewrite.
        """
        blocks = self.edits.get(d.path)
        if not blocks or not d.applied or d.cell is not None:
            return []
        fixed = [x for x in self.diagnostics if x.path == d.path and x.applied]

        def touches(block: Edit, site: Diagnostic) -> bool:
            last = max(block.end - 1, block.start)
            return block.start <= site.end_line and last >= site.line

        mine = [b for b in blocks if touches(b, d)]
        if fixed and fixed[0] is d:
            mine += [b for b in blocks if not any(touches(b, s) for s in fixed)]
        return sorted(set(mine), key=lambda b: (b.start, b.end))


def path_order(path: str):
    """Paths ordered as Ruff orders them, name by name along the path (so
    ``a/z.py``, ``a.py``, ``b/c.py``, ``main.py``), not the top folder's files
    first."""
    return PurePath(path).parts


def site_order(d: "Diagnostic"):
    return (path_order(d.path), d.cell or 0, d.line, d.col, d.code)


def as_findings(given) -> "Findings":
    """Renderers take Findings, or a plain list of diagnostics."""
    return given if isinstance(given, Findings) else Findings(list(given))


def plural(count: int, word: str, many: Optional[str] = None) -> str:
    """``1 site``, ``2 sites``, ``1 fix``, ``3 fixes``."""
    return f"{count} {word if count == 1 else many or word + 's'}"
