"""The output formats by name: the choices of ``--output-format`` and what renders
each, in one table so that the two always agree. A format's module is imported when
it renders: a run prints one format."""

from __future__ import annotations

import importlib
from typing import Callable, Dict, Tuple

# name -> (module, function)
_RENDERERS: Dict[str, Tuple[str, str]] = {
    "text": ("codemod.output.text", "render_text"),
    "concise": ("codemod.output.text", "render_text"),
    "full": ("codemod.output.full", "render_full"),
    "json": ("codemod.output.json_format", "render_json"),
    "github": ("codemod.output.github", "render_github"),
    "sarif": ("codemod.output.sarif", "render_sarif"),
    "junit": ("codemod.output.junit", "render_junit"),
    "gitlab": ("codemod.output.gitlab", "render_gitlab"),
    "pylint": ("codemod.output.pylint", "render_pylint"),
}
FORMATS = tuple(_RENDERERS)


def renderer(name: str) -> Callable[..., str]:
    """The function that renders findings in format ``name``."""
    module, function = _RENDERERS[name]
    return getattr(importlib.import_module(module), function)
