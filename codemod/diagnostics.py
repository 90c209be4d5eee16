"""The diagnostic type and its renderers."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import Iterable, List


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

    def at(self, path: str) -> "Diagnostic":
        return replace(self, path=path)


def _clean(text: str) -> str:
    """File names and messages go on one line: no newline can forge another record."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def render_text(diagnostics: Iterable[Diagnostic]) -> str:
    lines = []
    for d in diagnostics:
        marker = " [*]" if d.fix == "unsafe" and not d.applied else ""
        lines.append(
            f"{_clean(d.path)}:{d.line}:{d.col}: {d.code}{marker} {_clean(d.message)}"
        )
    return "".join(line + "\n" for line in lines)


def render_json(diagnostics: Iterable[Diagnostic]) -> str:
    return json.dumps([asdict(d) for d in diagnostics], indent=2) + "\n"


def _escape_property(text: str) -> str:
    # GitHub workflow-command escaping (properties need ':' and ',' escaped too).
    return (
        text.replace("%", "%25")
        .replace("\r", "%0D")
        .replace("\n", "%0A")
        .replace(":", "%3A")
        .replace(",", "%2C")
    )


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def render_github(diagnostics: Iterable[Diagnostic]) -> str:
    out: List[str] = []
    for d in diagnostics:
        out.append(
            f"::warning title=torchport {d.code},file={_escape_property(d.path)},"
            f"line={d.line},col={d.col}::{_escape_data(f'{d.code} {d.message}')}\n"
        )
    return "".join(out)


RENDERERS = {"text": render_text, "json": render_json, "github": render_github}
