"""Ruff's formatter settings, for a project formatted with ``ruff format`` rather
than black: its ``line-length``, and the ``[format]`` options black has a
counterpart for (``quote-style``, ``skip-magic-trailing-comma``).

Found as Ruff finds its configuration: the nearest ``.ruff.toml``, ``ruff.toml``
or ``pyproject.toml`` with a ``[tool.ruff]`` table at or above the file (in that
order within a folder). ``extend`` is not followed.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional

_FILES = (".ruff.toml", "ruff.toml", "pyproject.toml")


@dataclass(frozen=True)
class RuffLayout:
    config: Path
    line_length: Optional[int]
    # Leave string quotes as they are ("single" or "preserve"; black can only
    # normalize to double quotes).
    skip_string_normalization: bool = False
    skip_magic_trailing_comma: bool = False
    single_quotes: bool = False  # quote-style = "single": requote what is written

    @property
    def needs_black_mode(self) -> bool:
        return self.skip_string_normalization or self.skip_magic_trailing_comma


def ruff_layout(path: Optional[Path]) -> Optional[RuffLayout]:
    """The Ruff formatter settings for ``path``; None when no Ruff configuration
    applies or it sets none of them."""
    if path is None:
        return None
    start = Path(os.path.realpath(path))
    return _nearest(start if start.is_dir() else start.parent)


@functools.lru_cache(maxsize=None)
def _nearest(directory: Path) -> Optional[RuffLayout]:
    for folder in (directory, *directory.parents):
        for name in _FILES:
            table = _ruff_table(folder / name)
            if table is not None:
                return _layout(folder / name, table)
    return None


def _ruff_table(config: Path) -> Optional[Dict[str, Any]]:
    """The Ruff settings of ``config``: the whole file for ruff.toml, else its
    ``[tool.ruff]``; None when it has none (or cannot be read)."""
    try:
        if not config.is_file():
            return None
        data = config.read_bytes()
    except OSError:
        return None
    if config.name == "pyproject.toml" and b"ruff" not in data:
        return None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (ValueError, RecursionError, MemoryError):
        return None  # Ruff itself reports a configuration it cannot read
    if config.name != "pyproject.toml":
        return document
    tool = document.get("tool")
    table = tool.get("ruff") if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None


def _layout(config: Path, table: Dict[str, Any]) -> Optional[RuffLayout]:
    line_length = table.get("line-length")
    if type(line_length) is not int or not 1 <= line_length <= 320:
        line_length = None  # Ruff's own range; anything else Ruff refuses
    formatting = table.get("format")
    formatting = formatting if isinstance(formatting, dict) else {}
    quotes = formatting.get("quote-style")
    layout = RuffLayout(
        config,
        line_length,
        skip_string_normalization=quotes in ("single", "preserve"),
        skip_magic_trailing_comma=formatting.get("skip-magic-trailing-comma") is True,
        single_quotes=quotes == "single",
    )
    if layout.line_length is None and not layout.needs_black_mode:
        return None
    return layout
