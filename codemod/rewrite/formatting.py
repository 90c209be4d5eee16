"""Black, applied only to the lines torchport changed."""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, List, Optional, Tuple

from codemod.model.lines import split_lines
from codemod.rewrite.linediff import opcodes
from codemod.rewrite.pragmas import on_first_lines, unsplit
from codemod.model.text import one_line

LineRange = Tuple[int, int]


def changed_lines(old: str, new: str, line_length: int = 0) -> List[LineRange]:
    """1-based inclusive ranges of ``new`` that differ from ``old``.

    With ``line_length``, a line edited in place is left out when it was already
    longer than that and its code still fits (a long comment after a rewritten
    value): black would split the user's line because of the comment, not because
    of the rewrite.
    """
    old_lines, new_lines = split_lines(old, False), split_lines(new, False)
    ranges = []
    for tag, i1, i2, j1, j2 in opcodes(old_lines, new_lines):
        if tag not in ("replace", "insert") or j2 <= j1:
            continue
        if line_length and tag == "replace" and i2 - i1 == j2 - j1:
            for i, j in zip(range(i1, i2), range(j1, j2)):
                if (
                    len(old_lines[i]) <= line_length
                    or _code_width(new_lines[j]) > line_length
                ):
                    ranges.append((j + 1, j + 1))
            continue
        ranges.append((j1 + 1, j2))
    return ranges


def _code_width(line: str) -> int:
    """Width of ``line`` without its trailing comment (the whole line when it is not
    a complete statement on its own)."""
    import io
    import tokenize

    try:
        for token in tokenize.generate_tokens(io.StringIO(line + "\n").readline):
            if token.type == tokenize.COMMENT:
                return len(line[: token.start[1]].rstrip())
    except (tokenize.TokenError, SyntaxError):
        pass
    return len(line)


def line_map(old: str, new: str) -> List[int]:
    """For each 1-based line of ``old``, the line of ``new`` that holds it (index 0 unused).

    Lines the line diff matches map to each other. Inside a replaced block each old
    line goes, in order, to the new line sharing the longest head and tail with it
    (a rewritten call that black split, or that follows an inserted binding); heads
    and tails are compared over at most ``AFFINITY_CHARS`` characters, so the cost
    stays linear in the size of the text however long its lines are.
    """
    old_lines, new_lines = split_lines(old, False), split_lines(new, False)
    mapping = [0] * (len(old_lines) + 2)
    for tag, i1, i2, j1, j2 in opcodes(old_lines, new_lines):
        if tag == "replace" and (i2 - i1) * (j2 - j1) <= 4096:
            new_stripped = [line.strip() for line in new_lines[j1:j2]]
            at = 0
            for i in range(i1, i2):
                line = old_lines[i].strip()
                at = max(
                    range(at, j2 - j1),
                    key=lambda j: _affinity(line, new_stripped[j]),
                )
                mapping[i + 1] = j1 + at + 1
            continue
        for i in range(i1, i2):
            offset = min(i - i1, max(j2 - j1 - 1, 0))
            mapping[i + 1] = j1 + offset + 1
    mapping[len(old_lines) + 1] = len(new_lines) + 1
    return mapping


AFFINITY_CHARS = 256


def _affinity(a: str, b: str) -> int:
    """Characters ``a`` and ``b`` share at their start plus at their end, each
    counted up to ``AFFINITY_CHARS``."""
    head = _shared_run(a[:AFFINITY_CHARS], b[:AFFINITY_CHARS])
    tail = _shared_run(a[-AFFINITY_CHARS:][::-1], b[-AFFINITY_CHARS:][::-1])
    return head + tail


def _shared_run(a: str, b: str) -> int:
    """Length of the common prefix of ``a`` and ``b``."""
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return index
    return min(len(a), len(b))


class BlackConfigError(ValueError):
    """``[tool.black]`` holds a value black would not take (one line, naming the
    pyproject.toml)."""


DEFAULT_LINE_LENGTH = 88  # black's (a test holds it to black.DEFAULT_LINE_LENGTH)


@dataclass(frozen=True)
class Layout:
    """How black lays out the lines torchport changed: the line length, and the
    project's black Mode when it configures black. Importing black costs more than
    most rewrites, so black's default Mode is made only when black runs."""

    line_length: int = DEFAULT_LINE_LENGTH
    configured: Any = None  # the black Mode of [tool.black]; None: black's defaults
    # Where black's defaults apply, a process that has black imported and formats
    # on request (engine's black_helper); ConnectionError when it cannot answer.
    helper: Any = field(default=None, compare=False, repr=False)
    # Ruff's quote-style = "single": the strings of the changed lines are requoted.
    single_quotes: bool = False

    def black_mode(self):
        if self.configured is None:
            import black

            return black.Mode(line_length=self.line_length)
        return replace(self.configured, line_length=self.line_length)


def layout_for(path: Optional[Path]) -> Layout:
    """The layout of the project ``path`` is in: its ``[tool.black]``, else its
    Ruff formatter settings (``ruff_layout``), else black's defaults. Raises
    ``BlackConfigError``."""
    config = black_config(path)
    if config is None or not _has_black_table(config):
        from codemod.rewrite.ruff_layout import ruff_layout

        ruff = ruff_layout(path)
        if ruff is not None:
            return _ruff_layout(ruff)
    if config is None:
        return Layout()
    mode = black_mode(path)
    return Layout(mode.line_length, mode)


def _ruff_layout(ruff) -> Layout:
    line_length = ruff.line_length or DEFAULT_LINE_LENGTH  # Ruff's default is 88 too
    if not ruff.needs_black_mode:
        return Layout(line_length)
    import black

    mode = black.Mode(
        line_length=line_length,
        string_normalization=not ruff.skip_string_normalization,
        magic_trailing_comma=not ruff.skip_magic_trailing_comma,
    )
    return Layout(line_length, mode, single_quotes=ruff.single_quotes)


@functools.lru_cache(maxsize=None)
def _has_black_table(config: Path) -> bool:
    """Whether ``config`` has a ``[tool.black]`` table (one it cannot read counts:
    black_mode then says what is wrong)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        tool = tomllib.loads(config.read_text(encoding="utf-8")).get("tool", {})
    except (OSError, ValueError, RecursionError, MemoryError):
        return True
    return isinstance(tool, dict) and "black" in tool


def black_config(path: Optional[Path]) -> Optional[Path]:
    """The pyproject.toml that may hold the ``[tool.black]`` black would read for
    ``path``, found as black finds its project root; None when black would use its
    defaults for certain: no such file, or one that never says "black"."""
    if path is None:
        return None
    start = Path(os.path.realpath(path))
    return _black_config_above(start if start.is_dir() else start.parent)


@functools.lru_cache(maxsize=None)  # asked for each file of a folder
def _black_config_above(start: Path) -> Optional[Path]:
    for directory in (start, *start.parents):
        config = directory / "pyproject.toml"
        says_black = config.is_file() and _says_black(config)
        if (directory / ".git").exists() or (directory / ".hg").is_dir():
            return config if says_black else None  # black's root: it reads this one
        if says_black:
            return config  # black's root if its [tool.black] is real: black decides
    return None


def _says_black(config: Path) -> bool:
    try:
        return b"black" in config.read_bytes()
    except OSError:
        return True  # black_mode says what is wrong


def black_mode(path: Optional[Path]):
    """The project's black configuration (line length etc.) for ``path``."""
    import black

    if path is None:
        return black.Mode()
    root = black.find_project_root((str(path),))[0]
    config_path = Path(root) / "pyproject.toml"
    if not config_path.is_file():
        return black.Mode()
    return _black_mode_of(config_path)


def project_line_length(path: Optional[Path], layout: Optional[Layout] = None) -> int:
    """The line length of the project ``path`` is in: ``layout``'s when black runs,
    else ``[tool.black]``'s (black's default when it has none, or a bad one): the
    lines torchport lays out itself (the device binding) keep to it either way."""
    if layout is not None:
        return layout.line_length
    try:
        return layout_for(path).line_length
    except BlackConfigError:
        return DEFAULT_LINE_LENGTH


@functools.lru_cache(maxsize=None)
def _black_mode_of(config_path: Path):
    import black

    where = f"{config_path}: [tool.black]"
    try:
        config = black.parse_pyproject_toml(str(config_path))
    except (OSError, ValueError) as error:  # TOML and UTF-8 errors are ValueErrors
        raise BlackConfigError(f"{config_path}: cannot read: {one_line(error)}")
    versions = set()
    for value in _as_list(config.get("target_version", [])):
        version = black.TargetVersion.__members__.get(str(value).upper())
        if version is None:
            known = ", ".join(v.name.lower() for v in black.TargetVersion)
            raise BlackConfigError(
                f"{where} target-version: unknown version {value!r} (known: {known})"
            )
        versions.add(version)
    line_length = config.get("line_length", black.DEFAULT_LINE_LENGTH)
    if type(line_length) is not int or line_length < 1:
        raise BlackConfigError(
            f"{where} line-length must be a positive integer: {line_length!r}"
        )
    flags = {}
    for key in ("skip_string_normalization", "skip_magic_trailing_comma", "preview"):
        value = config.get(key, False)
        if not isinstance(value, bool):
            name = key.replace("_", "-")
            raise BlackConfigError(f"{where} {name} must be true or false: {value!r}")
        flags[key] = value
    return black.Mode(
        target_versions=versions,
        line_length=line_length,
        string_normalization=not flags["skip_string_normalization"],
        magic_trailing_comma=not flags["skip_magic_trailing_comma"],
        preview=flags["preview"],
    )


def _as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def format_changed(old: str, new: str, mode, suppressed=()) -> str:
    """Format with black the lines of ``new`` that are not in ``old``, except the
    statements holding a line of ``suppressed`` (lines of ``new`` where a ``#
    noqa`` suppressed a site, which must stay on it).

    Returns ``new`` unchanged if black cannot format it (black is a nicety here,
    never a reason to fail a rewrite).
    """
    ranges = unsplit(new, changed_lines(old, new, mode.line_length), suppressed)
    if not ranges:
        return new
    newline = "\r\n" if "\r\n" in new else "\n"
    if newline == "\r\n" and new.count("\n") != new.count("\r\n"):
        return new  # mixed line endings: leave the text exactly as libcst wrote it
    text = new.replace("\r\n", "\n") if newline == "\r\n" else new
    try:
        formatted = _black_format(text, mode, ranges)
    except Exception:  # black refuses some valid code; keep the unformatted rewrite
        return new
    formatted = _without_opener_blanks(text, formatted)
    formatted = _with_untouched_blanks(text, formatted, ranges)
    formatted = on_first_lines(text, formatted)
    return formatted.replace("\n", newline) if newline == "\r\n" else formatted


def _black_format(text: str, mode, ranges: List[LineRange]) -> str:
    """``black.format_str`` of ``text``'s ``ranges``: by the layout's helper when it
    has one, else here."""
    helper = (
        mode.helper if isinstance(mode, Layout) and mode.configured is None else None
    )
    if helper is not None:
        try:
            return helper.format_str(text, mode.line_length, ranges)
        except ConnectionError:
            pass  # the helper is gone: black runs here
    import black

    if isinstance(mode, Layout):
        mode = mode.black_mode()
    return black.format_str(text, mode=mode, lines=ranges)


def _with_untouched_blanks(old: str, new: str, ranges: List[LineRange]) -> str:
    """``new`` with the blank lines black removed or added away from ``ranges``
    (the lines torchport changed, 1-based in ``old``) put back as they were: with
    ``lines=``, black still evens out blank lines a few statements away."""
    touched = {line for start, end in ranges for line in range(start, end + 1)}
    old_lines, new_lines = split_lines(old), split_lines(new)
    out: List[str] = []
    for tag, i1, i2, j1, j2 in opcodes(old_lines, new_lines):
        blank_old = all(not line.strip() for line in old_lines[i1:i2])
        blank_new = all(not line.strip() for line in new_lines[j1:j2])
        near = {i1, i1 + 1, i2, i2 + 1}  # the lines around the hunk, 1-based
        if tag == "delete" and blank_old and not touched & set(range(i1, i2 + 2)):
            out.extend(old_lines[i1:i2])  # the user's blank lines, kept
        elif tag == "insert" and blank_new and not touched & near:
            continue  # blank lines black added next to untouched lines
        else:
            out.extend(new_lines[j1:j2])
    return "".join(out)


def _without_opener_blanks(old: str, new: str) -> str:
    """``new`` less the blank lines it adds right after a block opener.

    With ``lines=``, black puts a blank line between ``class C:`` and a first
    ``def`` or decorator when the range starts there, although it removes such
    lines when formatting the whole file.
    """
    old_lines, new_lines = split_lines(old), split_lines(new)
    drop = set()
    for tag, _, _, j1, j2 in opcodes(old_lines, new_lines):
        if (
            tag == "insert"
            and j1 > 0
            and new_lines[j1 - 1].rstrip().endswith(":")
            and not "".join(new_lines[j1:j2]).strip()
        ):
            drop.update(range(j1, j2))
    return "".join(line for j, line in enumerate(new_lines) if j not in drop)
