"""Black, applied only to the lines torchport changed."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Tuple

from codemod.linediff import opcodes

LineRange = Tuple[int, int]


def changed_lines(old: str, new: str) -> List[LineRange]:
    """1-based inclusive ranges of ``new`` that differ from ``old``."""
    ranges = []
    for tag, _, _, j1, j2 in opcodes(old.splitlines(), new.splitlines()):
        if tag in ("replace", "insert") and j2 > j1:
            ranges.append((j1 + 1, j2))
    return ranges


def line_map(old: str, new: str) -> List[int]:
    """For each 1-based line of ``old``, the line of ``new`` that holds it (index 0 unused)."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    mapping = [0] * (len(old_lines) + 2)
    for tag, i1, i2, j1, j2 in opcodes(old_lines, new_lines):
        for i in range(i1, i2):
            offset = min(i - i1, max(j2 - j1 - 1, 0))
            mapping[i + 1] = j1 + offset + 1
    mapping[len(old_lines) + 1] = len(new_lines) + 1
    return mapping


def black_mode(path: Optional[Path]):
    """The project's black configuration (line length etc.) for ``path``."""
    import black

    if path is None:
        return black.Mode()
    root = black.find_project_root((str(path),))[0]
    config_path = Path(root) / "pyproject.toml"
    if not config_path.is_file():
        return black.Mode()
    config = black.parse_pyproject_toml(str(config_path))
    versions = {
        black.TargetVersion[v.upper()] for v in config.get("target_version", []) or []
    }
    return black.Mode(
        target_versions=versions,
        line_length=config.get("line_length", black.DEFAULT_LINE_LENGTH),
        string_normalization=not config.get("skip_string_normalization", False),
        magic_trailing_comma=not config.get("skip_magic_trailing_comma", False),
        preview=config.get("preview", False),
    )


def format_changed(old: str, new: str, mode, keep: str = "") -> str:
    """Format with black the lines of ``new`` that are not in ``old``.

    The lines of the block ``keep`` (torchport's own binding) are left as written.

    Returns ``new`` unchanged if black cannot format it (black is a nicety here,
    never a reason to fail a rewrite).
    """
    import black

    ranges = changed_lines(old, new)
    if keep and keep in new:
        first = new[: new.index(keep)].count("\n") + 1
        last = first + keep.count("\n") - 1
        ranges = _without(ranges, first, last)
    if not ranges:
        return new
    newline = "\r\n" if "\r\n" in new else "\n"
    if newline == "\r\n" and new.count("\n") != new.count("\r\n"):
        return new  # mixed line endings: leave the text exactly as libcst wrote it
    text = new.replace("\r\n", "\n") if newline == "\r\n" else new
    try:
        formatted = black.format_str(text, mode=mode, lines=ranges)
    except Exception:  # black refuses some valid code; keep the unformatted rewrite
        return new
    return formatted.replace("\n", newline) if newline == "\r\n" else formatted


def _without(ranges: List[LineRange], first: int, last: int) -> List[LineRange]:
    """``ranges`` with the lines first..last taken out."""
    kept: List[LineRange] = []
    for start, end in ranges:
        if start < first:
            kept.append((start, min(end, first - 1)))
        if end > last:
            kept.append((max(start, last + 1), end))
    return kept
