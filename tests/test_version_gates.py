"""Branches of torch-version tests bound the target there (passes/version_gates.py)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from codemod.model.options import Options
from codemod.passes.version_gates import bounded_branches
from codemod.rewrite.pipeline import rewrite_source


def _bounds(source: str):
    return [b[:3] for b in bounded_branches(ast.parse(textwrap.dedent(source)))]


@pytest.mark.parametrize(
    "test, highest",
    [
        ('version.parse(torch.__version__) < version.parse("2.4")', (2, 3)),
        ('Version(torch.__version__) <= Version("2.4.1")', (2, 4)),
        ("TORCH_VERSION < (2, 0)", (1, 99)),
        ('"2.6" > torch.__version__', (2, 5)),
    ],
)
def test_the_body_of_an_upper_bound_runs_on_older_releases(test, highest):
    source = f"""\
        import torch
        TORCH_VERSION = tuple(map(int, torch.__version__.split(".")[:2]))
        if {test}:
            old()
        """
    assert _bounds(source) == [(4, 4, highest)]


def test_the_else_of_a_lower_bound_runs_on_older_releases():
    assert _bounds("""\
        import torch
        if torch.__version__ >= "2.9":
            new()
        else:
            old()
            older()
        """) == [(5, 6, (2, 8))]


def test_other_comparisons_bound_nothing():
    assert _bounds("""\
        import torch, sys
        if sys.version_info < (3, 9):
            old()
        if numpy.__version__ < "2.0":
            old()
        """) == []


def test_a_fix_newer_than_the_branch_is_reported_there():
    source = textwrap.dedent("""\
        import torch
        if torch.__version__ < "2.6":
            torch.cuda.synchronize()
        else:
            torch.cuda.synchronize()
        """)
    result = rewrite_source(source, Options(target_torch=(2, 10)))
    reports = [d for d in result.diagnostics if d.code == "TP304"]
    assert [d.applied for d in reports] == [False, True]
    assert "target is 2.5) in this branch" in reports[0].message
    assert "torch.cuda.synchronize()\nelse:" in result.code
