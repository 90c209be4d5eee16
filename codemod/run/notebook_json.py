"""A notebook's JSON text, edited in place: where each cell's ``"source"`` value
lies in the file, and new values written the way the old ones were.

Apart from the notebook handler because it is about the file's bytes, not its
cells: splicing values into the text keeps metadata, outputs, key order and
indentation byte for byte, which a ``json.dumps`` of the whole would not.
"""

from __future__ import annotations

import json
import re
from typing import Dict, Iterator, List, Optional, Tuple


class DuplicateKeyError(ValueError):
    """An object of the notebook has a key twice: JSON readers differ on which
    value counts (Python's and Jupyter's take the last), so splicing one is unsafe."""


def unique_keys(pairs: List[Tuple[str, object]]) -> dict:
    """``object_pairs_hook`` for ``json.loads``: a dict, unless a key repeats."""
    made = dict(pairs)
    if len(made) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(f"duplicate key {json.dumps(key)} in its JSON")
            seen.add(key)
    return made


_DECODER = json.JSONDecoder(object_pairs_hook=unique_keys)
_SPACE = re.compile(r"[ \t\n\r]*")


def with_sources(
    text: str, spans: List[Tuple[int, int]], sources: Dict[int, str]
) -> str:
    """``text`` with the "source" value of each cell in ``sources`` (cell index ->
    new source) replaced; ``spans`` are ``source_spans(text)``.

    One pass over the file whatever the number of cells: whether it escapes
    non-ASCII is decided once, and the output is joined once from the text
    between the values and the new values."""
    ascii_only = escapes_non_ascii(text)
    pieces: List[str] = []
    at = 0
    for index in sorted(sources, key=lambda i: spans[i]):
        start, end = spans[index]
        pieces.append(text[at:start])
        pieces.append(source_json(text[start:end], sources[index], ascii_only))
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


def escapes_non_ascii(text: str) -> bool:
    """The notebook writes non-ASCII as ``\\uXXXX`` escapes: no character of it
    is outside ASCII, and it has an escape (``json.dump``'s default output)."""
    return text.isascii() and "\\u" in text


def source_spans(text: str) -> Iterator[Tuple[int, int]]:
    """(start, end) offsets of each cell's "source" value in the notebook text."""
    start = _skip(text, 0)
    for key, value_start, value_end in _members(text, start):
        if key != "cells":
            continue
        for cell_start, _ in _elements(text, value_start):
            span = None
            if text[cell_start] == "{":
                for cell_key, s, e in _members(text, cell_start):
                    if cell_key == "source":
                        span = (s, e)
            yield span if span is not None else (cell_start, cell_start)
        return


def _skip(text: str, i: int) -> int:
    return _SPACE.match(text, i).end()  # type: ignore[union-attr]


def _members(text: str, i: int) -> Iterator[Tuple[str, int, int]]:
    """(key, value start, value end) of the object starting at ``i``."""
    return _items(text, i, "{}")  # type: ignore[return-value]


def _elements(text: str, i: int) -> Iterator[Tuple[int, int]]:
    """(start, end) of each element of the array starting at ``i``."""
    return ((start, end) for _, start, end in _items(text, i, "[]"))


def _items(
    text: str, i: int, brackets: str
) -> Iterator[Tuple[Optional[str], int, int]]:
    """(key or None, value start, value end) of the object or array at ``i``."""
    opening, closing = brackets
    if text[i] != opening:
        raise ValueError(f"expected {opening!r} at offset {i}")
    i = _skip(text, i + 1)
    if text[i] == closing:
        return
    while True:
        key = None
        if opening == "{":
            key, i = _DECODER.raw_decode(text, i)
            i = _skip(text, i)
            if text[i] != ":":
                raise ValueError(f"expected ':' at offset {i}")
            i = _skip(text, i + 1)
        _, end = _DECODER.raw_decode(text, i)
        yield key, i, end
        i = _skip(text, end)
        if text[i] == closing:
            return
        if text[i] != ",":
            raise ValueError(f"expected ',' at offset {i}")
        i = _skip(text, i + 1)


def source_json(old: str, new_text: str, ascii_only: bool) -> str:
    """``new_text`` as a "source" value written the way ``old`` was written,
    non-ASCII escaped when ``ascii_only`` (``escapes_non_ascii`` of the file)."""

    def dump(value: str) -> str:
        return json.dumps(value, ensure_ascii=ascii_only)

    if not old.startswith("["):
        return dump(new_text)
    lines = [line + "\n" for line in new_text.split("\n")]
    lines[-1] = lines[-1][:-1]
    if not lines[-1]:
        lines.pop()
    if not lines:
        return "[]"
    if "\n" not in old:
        separator = "," if '","' in old and '", "' not in old else ", "
        return "[" + separator.join(dump(line) for line in lines) + "]"
    inner = re.match(r"\[\n([ \t]*)", old)
    closing = re.search(r"\n([ \t]*)\]$", old)
    item_indent = inner.group(1) if inner else " "
    close_indent = closing.group(1) if closing else ""
    body = ",\n".join(item_indent + dump(line) for line in lines)
    return f"[\n{body}\n{close_indent}]"
