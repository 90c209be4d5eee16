"""Python 3.14's ``except A, B:`` (PEP 758) is not Python 2 code: where libcst reads
it the file is rewritten; where no parser reads it, the message names the grammar
that is missing."""

from __future__ import annotations

import sys

import pytest

from codemod.model.options import Options
from codemod.run.job import WRITE, Job
from codemod.run.process import process_source

NEWER = (
    "import torch\n"
    "try:\n"
    "    x = torch.ones(2).cuda()\n"
    "except ValueError, TypeError:\n"
    "    pass\n"
)

pytestmark = pytest.mark.skipif(
    sys.version_info >= (3, 14), reason="the interpreter reads PEP 758 itself"
)


def test_except_without_parentheses_is_rewritten():
    result = process_source("new.py", NEWER.encode(), Job(WRITE, Options(), False))
    assert result.error is None, result.error
    out = result.output.decode()
    assert "    x = torch.ones(2).to(_DEVICE())\nexcept ValueError, TypeError:\n" in out


def test_where_no_parser_reads_it_the_missing_grammar_is_named():
    broken = NEWER + "y = (\n"  # libcst fails too (on line 6)
    result = process_source("new.py", broken.encode(), Job(WRITE, Options(), False))
    major, minor = sys.version_info[:2]
    assert result.error == (
        "new.py: cannot parse: line 4: multiple exception types must be"
        " parenthesized (Python 3.14 grammar: `except A, B:` without parentheses,"
        f" PEP 758; Python {major}.{minor} does not read it, and libcst's parser"
        " fails on this file too)"
    )
    assert "Python 2" not in result.error


def test_python_2_code_is_still_called_so():
    py2 = b'import torch\nprint "on", torch.ones(2).cuda()\n'
    result = process_source("old.py", py2, Job(WRITE, Options(), False))
    assert result.error.endswith("(Python 2 code is not supported)")


def test_a_newer_construct_inside_the_bare_types_is_blanked_once():
    # the types are blanked as a whole; what is inside them is not blanked again
    source = (
        "import torch\ntry:\n    x = torch.ones(2).cuda()\n"
        'except E[f"{"a"}"], KeyError:\n    pass\n'
    )
    result = process_source("new.py", source.encode(), Job(WRITE, Options(), False))
    assert result.error is None, result.error
    assert "x = torch.ones(2).to(_DEVICE())" in result.output.decode()
