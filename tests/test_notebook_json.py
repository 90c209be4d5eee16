"""Splicing new "source" values into a notebook's JSON text: one pass over the file,
with the output of the earlier splice (one whole-file scan and rebuild per cell),
byte for byte, in every layout a notebook is written in."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from codemod.run.notebook import _in_cell
from codemod.run.notebook_json import (
    escapes_non_ascii,
    source_json,
    source_spans,
    with_sources,
)
from tests.fixture_cases import FIXTURES


def splice_per_cell(text, spans, sources):
    """The splice as it was: the whole file scanned for non-ASCII and rebuilt once
    per changed cell, from the last cell to the first."""
    new_text = text
    for index in sorted(sources, key=lambda i: spans[i], reverse=True):
        start, end = spans[index]
        ascii_only = not any(ord(c) > 127 for c in text) and "\\u" in text
        value = source_json(text[start:end], sources[index], ascii_only)
        new_text = new_text[:start] + value + new_text[end:]
    return new_text


NEW_SOURCES = [
    "import torch\nx = torch.ones(2).to(_DEVICE())\n",
    "y = 1",
    "",
    "\n\n",
    "s = 'gr\u00fc\u00dfe \u2603'\nt = s + '\U0001f600'\n",
    'q = "a \\"quoted\\" \\\\ line"\n\tz = 2\n',
]


def _cell(i: int, source):
    if i % 4 == 3:
        return {"cell_type": "markdown", "metadata": {}, "source": source}
    return {
        "cell_type": "code",
        "execution_count": i,
        "metadata": {},
        "outputs": [{"name": "stdout", "output_type": "stream", "text": ["é\n"]}],
        "source": source,
    }


def _notebook(sources, **dump) -> str:
    cells = [_cell(i, s) for i, s in enumerate(sources)]
    data = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(data, **dump) + "\n"


LISTS = [["import torch\n", "x = torch.ones(2).cuda()\n"], ["y = 2"], []]
STRINGS = ["import torch\nx = 1\n", "z = 'caf\u00e9'", ""]
LAYOUTS = {
    "indent 1, lists": _notebook(LISTS * 3, indent=1),
    "indent 2, strings": _notebook(STRINGS * 3, indent=2),
    "one line, lists": _notebook(LISTS * 3),
    "compact, lists": _notebook(LISTS * 3, separators=(",", ":")),
    "mixed, non-ASCII kept": _notebook(LISTS + STRINGS, indent=1, ensure_ascii=False),
    "mixed, non-ASCII escaped": _notebook(LISTS + STRINGS, indent=1),
    "tabs": _notebook(LISTS * 2, indent="\t"),
    "CRLF": _notebook(LISTS * 2, indent=1).replace("\n", "\r\n"),
    "no escapes at all": _notebook([["x = 1\n"], "y = 2\n"] * 3, indent=1),
}
FILES = sorted(p for p in FIXTURES.glob("*/*.ipynb"))


@dataclass
class Case:
    text: str
    changed: list  # cell indexes, in the order the caller names them


def _cases():
    for name, text in LAYOUTS.items():
        count = len(list(source_spans(text)))
        yield name, Case(text, list(range(count)))
        yield name + ", some cells, out of order", Case(text, [4, 0, 2][:count])
    for path in FILES:
        text = path.read_bytes().decode("utf-8-sig")
        count = len(list(source_spans(text)))
        yield path.name, Case(text, list(reversed(range(count))))


CASES = dict(_cases())


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_one_pass_splice_writes_what_the_per_cell_splice_wrote(name):
    case = CASES[name]
    spans = list(source_spans(case.text))
    for shift in range(len(NEW_SOURCES)):
        sources = {
            index: NEW_SOURCES[(n + shift) % len(NEW_SOURCES)]
            for n, index in enumerate(case.changed)
        }
        got = with_sources(case.text, spans, sources)
        assert got == splice_per_cell(case.text, spans, sources)
        new = json.loads(got)["cells"]
        for index, source in sources.items():
            value = new[index]["source"]
            assert ("".join(value) if isinstance(value, list) else value) == source


def test_the_one_pass_splice_leaves_the_text_alone_when_nothing_changed():
    text = LAYOUTS["indent 1, lists"]
    assert with_sources(text, list(source_spans(text)), {}) == text


@pytest.mark.parametrize(
    "text, escapes",
    [
        ("", False),
        ('{"a": "x"}', False),
        ('{"a": "caf\\u00e9"}', True),
        ('{"a": "caf\u00e9"}', False),
        ('{"a": "caf\u00e9 \\u00e9"}', False),  # not written by an ASCII-only dump
    ],
)
def test_a_file_escapes_non_ascii_when_it_is_ascii_with_an_escape(text, escapes):
    assert escapes_non_ascii(text) is escapes


@dataclass
class _Diagnostic:
    line: int
    path: str = ""
    cell: int = 0


def _cell_by_scan(line, starts):
    """The cell of a line of the joined module, by the scan of every marker."""
    return max((i for i, start in enumerate(starts) if start < line), default=0)


@pytest.mark.parametrize("starts", [[1, 4, 9], [3, 5, 6, 20], [1], [2]])
def test_a_diagnostic_is_put_in_the_cell_the_scan_of_all_markers_found(starts):
    @dataclass
    class Cell:
        index: int

    cells = [Cell(10 + n) for n in range(len(starts))]
    for line in range(1, starts[-1] + 4):
        got = _in_cell(_Diagnostic(line), "nb.ipynb", starts, cells)
        n = _cell_by_scan(line, starts)
        assert got.cell == cells[n].index + 1
        if n or starts[0] == 1:
            assert got.line == line - starts[n]
