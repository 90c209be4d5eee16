"""The output formats by name: the choices of ``--output-format`` and what renders
each, in one table so that the two always agree."""

from __future__ import annotations

from typing import Callable, Dict

from codemod.output.findings import Findings
from codemod.output.github import render_github
from codemod.output.json_format import render_json
from codemod.output.sarif import render_sarif
from codemod.output.text import render_text

RENDERERS: Dict[str, Callable[[Findings], str]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
}
