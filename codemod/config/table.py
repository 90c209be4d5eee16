"""Reading ``[tool.torchport]`` for the command line: whether a pyproject.toml has
the table at all (a file without it is passed over, as Ruff passes over a
pyproject.toml without ``[tool.ruff]``), the table checked against the schema
(``schema``), every gitignore pattern it holds compiled, and then the values
checked by ``pyproject.read_table``.

Everything a bad file can do ends as one ``ConfigError`` naming it: a TOML
document nested too deep for the parser, a pattern pathspec refuses
(``exclude = ["[z-a]"]``), a key or a value the schema does not allow.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, List, Optional

from codemod.config import schema
from codemod.config.pyproject import ConfigError, load_toml, read_table
from codemod.model.text import one_line

PATTERN_KEYS = ("exclude", "extend-exclude")


def configures_torchport(candidate: Path) -> bool:
    """Whether ``candidate`` is a pyproject.toml with a ``[tool.torchport]`` table;
    one that cannot be read counts (its error is then reported, not skipped). Only
    a regular file is opened: a named pipe would wait for a writer."""
    try:
        if not candidate.is_file():
            return False
    except OSError:
        return False
    try:
        return raw_table(candidate) is not None
    except ConfigError:
        return True


def raw_table(pyproject: Path) -> Optional[Dict[str, Any]]:
    """``[tool.torchport]`` of ``pyproject`` as the TOML parser gives it; None when
    the file has no such table."""
    data = load_toml(pyproject)
    tool = data.get("tool")
    if not isinstance(tool, dict) or "torchport" not in tool:
        return None
    return tool["torchport"]


def checked_table(pyproject: Path) -> Optional[Dict[str, Any]]:
    """``[tool.torchport]`` of ``pyproject``, checked (ConfigError otherwise);
    None when the file has no such table."""
    table = raw_table(pyproject)
    if table is None:
        return None
    found = schema.problem(table)
    if found:
        hint = ' (quote it: "2.6")' if found.startswith(_TARGET_TYPE) else ""
        raise ConfigError(f"{pyproject}: {found}{hint}")
    for key in PATTERN_KEYS:
        check_patterns(f"{pyproject}: tool.torchport.{key}", table.get(key, []))
    check_patterns(
        f"{pyproject}: tool.torchport.per-file-ignores",
        list(table.get("per-file-ignores", {})),
    )
    return read_table(pyproject)


_TARGET_TYPE = "tool.torchport.target-torch must be"
_POSITION = re.compile(r" at position \d+$")


def check_patterns(where: str, patterns: List[str]) -> None:
    """Each of ``patterns`` must be a gitignore pattern pathspec compiles (as the
    walk compiles them); ConfigError naming ``where`` and the pattern otherwise."""
    if not patterns:
        return
    import pathspec

    for pattern in patterns:
        try:
            pathspec.GitIgnoreSpec.from_lines([pattern])
        except Exception as error:  # re.error, and pathspec's own refusals
            reason = _POSITION.sub("", one_line(error))
            raise ConfigError(f"{where}: bad pattern {pattern!r}: {reason}") from None
