"""The diagnostic type and its renderers."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import Iterable, List, Optional

from codemod.text import printable, printable_path


@dataclass(frozen=True)
class Diagnostic:
    path: str
    line: int
    col: int  # 1-based, like Ruff and flake8
    code: str
    name: str
    message: str
    fix: str  # "safe" | "unsafe" | "none": the fix kind of the rule
    applied: bool = False  # True when torchport rewrote the site
    cell: Optional[int] = None  # notebooks: 1-based cell number; line is in the cell

    def at(self, path: str) -> "Diagnostic":
        return replace(self, path=path)

    @property
    def where(self) -> str:
        """``path``, or ``path:cell N`` in a notebook."""
        return self.path if self.cell is None else f"{self.path}:cell {self.cell}"


# File names and messages go on one line, printable: no control character can
# forge another record or rewrite the terminal.
_clean = printable


def render_text(diagnostics: Iterable[Diagnostic]) -> str:
    lines = []
    for d in diagnostics:
        marker = " [*]" if d.fix == "unsafe" and not d.applied else ""
        lines.append(
            f"{printable_path(d.where)}:{d.line}:{d.col}: {d.code}{marker} {_clean(d.message)}"
        )
    return "".join(line + "\n" for line in lines)


def render_json(diagnostics: Iterable[Diagnostic]) -> str:
    return json.dumps([asdict(d) for d in diagnostics], indent=2) + "\n"


def _escape_property(text: str) -> str:
    # GitHub workflow-command escaping (properties need ':' and ',' escaped too).
    return printable(
        text.replace("%", "%25")
        .replace("\r", "%0D")
        .replace("\n", "%0A")
        .replace(":", "%3A")
        .replace(",", "%2C")
    )


def _escape_data(text: str) -> str:
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def render_github(diagnostics: Iterable[Diagnostic]) -> str:
    """GitHub Actions workflow commands: one annotation per site.

    In a notebook the annotation names the file and the message names the cell.
    """
    out: List[str] = []
    for d in diagnostics:
        level = "warning"
        place = f"line={d.line},col={d.col}"
        text = f"{d.code} {d.message}"
        if d.cell is not None:
            place = "line=1"
            text = f"cell {d.cell}:{d.line}:{d.col}: {text}"
        out.append(
            f"::{level} title={_escape_property(f'torchport {d.code}')},"
            f"file={_escape_property(d.path)},{place}::{_escape_data(text)}\n"
        )
    return "".join(out)


def render_fixes(results, heading: str = "Fixed in") -> str:
    """The sites rewritten in each file (``--show-fixes``); ``results`` are FileResults."""
    out: List[str] = []
    for result in results:
        fixed = [d for d in result.diagnostics if d.applied]
        if not fixed or not result.changed:
            continue
        out.append(f"{heading} {_clean(result.path)}:\n")
        for d in fixed:
            cell = f"cell {d.cell}:" if d.cell is not None else ""
            out.append(f"  {cell}{d.line}:{d.col}: {d.code} {_clean(d.message)}\n")
    return "".join(out)


RENDERERS = {"text": render_text, "json": render_json, "github": render_github}
