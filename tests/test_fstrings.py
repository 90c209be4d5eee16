"""Fixes inside f-string fields: valid on Python 3.9+, else reported per site."""

from __future__ import annotations

import ast
import sys

import libcst as cst
import pytest

from codemod.rewrite import checks
from codemod.rewrite import fstrings
from codemod.rewrite import pipeline as transform
from codemod.model.options import Options
from codemod.passes.base import Pass
from tests.fixture_cases import after_of, before_files, case_id


@pytest.mark.parametrize("before", before_files(), ids=case_id)
def test_every_after_file_is_valid_before_python_3_12(before):
    source = before.read_text(encoding="utf-8")
    after = after_of(before).read_text(encoding="utf-8")
    if not fstrings.needs_python_3_12(cst.parse_module(source)):
        assert not fstrings.needs_python_3_12(cst.parse_module(after))


# Each expectation is what CPython 3.11's parser says.
@pytest.mark.parametrize(
    "code, valid",
    [
        ("f\"{x if y else 'cpu'}\"", True),
        ('f"{x if y else "cpu"}"', False),
        ('f"""{x if y else "cpu"}"""', True),
        ("f\"{f'{x}'}\"", True),
        ("f\"{f'{x if y else 1}' + 'a'}\"", True),
        ("f\"{f'{'a'}'}\"", False),
        ("f\"{x['#']}\"", True),
        ('f"{chr(10)!r:>{w}}"', True),
        ("f\"{x + '\\t'}\"", False),
    ],
)
def test_validity_before_python_3_12(code, valid):
    assert fstrings.needs_python_3_12(cst.parse_module(code)) is not valid
    if sys.version_info < (3, 12):  # the real parser agrees
        try:
            ast.parse(code)
        except SyntaxError:
            assert not valid
        else:
            assert valid


class EmitsBackslash(Pass):
    """`torch.cuda.current_device()` becomes a string with a backslash escape: no
    quoting makes that valid inside an f-string field before Python 3.12."""

    def leave_Call(self, original_node, updated_node):
        name = self.callee(original_node)
        if name == "torch.cuda.current_device" and self.record_and_decide(
            original_node, "TP405"
        ):
            return cst.SimpleString('"a\\tb"')
        return updated_node


def test_a_site_that_cannot_be_written_in_its_field_is_reported_alone():
    source = (
        "import torch\n"
        'print(f"{torch.cuda.current_device()} {1}")\n'
        "x = torch.cuda.current_device()\n"
    )
    result = transform.rewrite_source(source, Options(), passes=(EmitsBackslash,))
    assert result.code == (
        "import torch\n" 'print(f"{torch.cuda.current_device()} {1}")\n' 'x = "a\\tb"\n'
    )
    ast.parse(result.code)
    (kept,) = [d for d in result.diagnostics if not d.applied]
    assert (kept.line, kept.col, kept.code, kept.fix) == (2, 10, "TP405", "none")
    assert "Python before 3.12" in kept.message
    assert [d.line for d in result.diagnostics if d.applied] == [3]


def test_rollback_message_cites_the_input_line():
    error = SyntaxError("f-string: expecting '}'")
    error.lineno = 9  # in the written text: the binding moved line 3 to line 9
    message = checks.syntax_message(error, {1: 1, 2: 7, 3: 9, 4: 10})
    assert message == "f-string: expecting '}' (from line 3 of the input)"
