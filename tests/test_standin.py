"""Bulky data that holds no site is set aside from what ``ast`` reads
(``codemod.rewrite.standin``), and nothing else changes: the same output, the same
reports, the same errors as when ``ast`` reads it all."""

from __future__ import annotations

import ast

import pytest

from codemod.model.options import Options
from codemod.model.pieces import pieces
from codemod.passes import PASSES
from codemod.rewrite import pipeline, standin
from codemod.run.job import WRITE, Job
from codemod.run.process import process_source

JOB = Job(WRITE, Options(target_torch=(2, 10)))
SITE = "y = torch.zeros(1).cuda()\n"
ITEMS = ", ".join(
    ["1", "-2", "3.5", "0x1F", "1e5", "True", "None", "1j", "1_000"] * 400
)


def _outcome(source: str):
    result = process_source("data.py", source.encode(), JOB)
    diagnostics = [(d.line, d.col, d.code, d.message) for d in result.diagnostics]
    return result.error, result.output, diagnostics


def _as_written(monkeypatch, source: str):
    """The outcome with every byte read by ``ast``."""
    with monkeypatch.context() as patched:
        patched.setattr(standin, "read", lambda text, checked=(): (text, set()))
        return _outcome(source)


CASES = {
    "list before the site": f"import torch\nDATA = [{ITEMS}]\n{SITE}",
    "tuple after the site": f"import torch\n{SITE}DATA = ({ITEMS})\n",
    "set on the site's line": f"import torch\nDATA = {{{ITEMS}}}; {SITE}",
    "call in a function": f"import torch\ndef f(x):\n    g({ITEMS})\n    return x.cuda()\n",
    "subscript": f"import torch\n{SITE}z = y[{ITEMS}]\n",
    "nested, one item a line": (
        "import torch\nDATA = [\n"
        + "".join(f"    [{i}, -{i}.5],  # row {i}\n" for i in range(600))
        + "]\n"
        + SITE
    ),
    "two items without a comma": f"import torch\n{SITE}DATA = [{ITEMS} 1, 2]\n",
    "a double comma": f"import torch\n{SITE}DATA = [1,, {ITEMS}]\n",
    "a bad number": f"import torch\n{SITE}DATA = [{ITEMS}, 01]\n",
    "an unclosed bracket": f"import torch\n{SITE}DATA = [{ITEMS}, [1, 2]\n",
    "assigned to": f"import torch\n{SITE}[\n{ITEMS}] = y\n",
    "a name in it": f"import torch\n{SITE}DATA = [{ITEMS}, x]\n",
    "a comment that mentions cuda": f"import torch\n{SITE}DATA = [  # cuda\n{ITEMS}]\n",
}


@pytest.mark.parametrize("source", CASES.values(), ids=CASES.keys())
def test_setting_data_aside_changes_nothing(monkeypatch, source):
    assert _outcome(source) == _as_written(monkeypatch, source)


@pytest.mark.parametrize(
    "name, aside",
    [
        ("list before the site", True),
        ("nested, one item a line", True),
        ("two items without a comma", False),  # ast reads it, and says what is wrong
        ("a double comma", False),
        ("a bad number", False),
        ("assigned to", True),  # the stand-in is wrong where the data is: as before
        ("a name in it", False),
        ("a comment that mentions cuda", False),
    ],
)
def test_only_data_that_parses_is_set_aside(name, aside):
    assert bool(standin.read(CASES[name])[1]) is aside


def test_the_stand_in_keeps_every_line_and_column():
    source = CASES["nested, one item a line"]
    view, aside = standin.read(source)
    assert len(view) == len(source) and view.count("\n") == source.count("\n")
    assert view.startswith("import torch\nDATA = [\n    0") and view.endswith(
        "]\n" + SITE
    )
    site = ast.parse(view).body[-1]
    assert (site.lineno, site.col_offset) == (source.count("\n"), 0)


def test_a_match_statement_keeps_its_data():
    """A pattern is not an expression: ``case [0]`` may hold where the data did not."""
    source = f"import torch\nmatch y:\n    case [{ITEMS}]:\n        pass\n{SITE}"
    assert standin.read(source) == (source, set())


def test_ast_reads_the_same_tree_whatever_the_size_of_the_data():
    """The data beside a site costs ``ast`` nothing: the module's tree (and every
    walk of it) is as small for 400 KB of data as for 200 KB (it was one node an
    item)."""

    def nodes(size: int) -> int:
        source = "import torch\n" + SITE + "DATA = [" + "1, " * (size // 3) + "]\n"
        located = pipeline.locate(source, PASSES)
        return sum(1 for _ in ast.walk(located.tree))

    assert nodes(400_000) == nodes(200_000)


@pytest.mark.parametrize(
    "text, expected",
    [
        ('x = rb"a"', [(0, 4, "code"), (4, 9, "string")]),
        ('x = xr"a"', [(0, 6, "code"), (6, 9, "string")]),  # xr is a name
        (
            "f'{a}' # c\ny",
            [(0, 6, "fields"), (6, 7, "code"), (7, 11, "comments"), (11, 12, "code")],
        ),
        ("Rt'''a'''", [(0, 9, "fields")]),
        ("é'a'", [(0, 1, "code"), (1, 4, "string")]),
        ("'a\\'b' 'c", [(0, 6, "string"), (6, 7, "code"), (7, 9, "string")]),
        ("# a\n# b\n\n  c", [(0, 9, "comments"), (9, 12, "code")]),
    ],
)
def test_pieces_are_the_strings_and_comments_python_reads(text, expected):
    """The scan stops at a quote or ``#`` and looks for a string's prefix before
    the quote (a pattern that tried a prefix at every character was the slowest
    part of setting data aside)."""
    assert list(pieces(text)) == expected
