"""Any syntax libcst parses is processed, whatever Python torchport runs on:
statements are located from libcst's parse when the interpreter's ast fails."""

from __future__ import annotations

import ast
import sys

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from codemod.rewrite import grammar
from codemod.run.job import CHECK, WRITE, Job
from codemod.run.process import process_source
from codemod.model.options import Options

# PEP 695 (generics, type aliases; Python 3.12) and PEP 701 (f-strings that reuse
# their quotes; 3.12), spread over several lines.
NEWER = '''import torch


def first[T](items: list[T]) -> T:
    return items[0].cuda()


class Box[
    T: (int, str),
    *Ts,
]:
    def move(self, x: T):
        return torch.ones(1).cuda()


type Pair[T] = tuple[
    T, T
]
label = f"{'on' + "gpu"}"
text = f"""
{torch.ones(1).cuda()}
"""
x = torch.zeros(2).cuda()
'''


def test_newer_grammar_is_rewritten():
    result = process_source("new.py", NEWER.encode(), Job(WRITE, Options(), True))
    assert result.error is None
    out = result.output.decode()
    assert out.count(".to(_DEVICE())") == 4 and ".cuda()" not in out
    assert (
        "def first[T](items: list[T]) -> T:\n    return items[0].to(_DEVICE())" in out
    )
    assert 'type Pair[T] = tuple[\n    T, T\n]\nlabel = f"{\'on\' + "gpu"}"' in out
    again = process_source("new.py", result.output, Job(CHECK, Options(), True))
    assert not again.changed and again.error is None


def _libcst_spans(source: str):
    wrapper = MetadataWrapper(cst.parse_module(source))
    positions = wrapper.resolve(PositionProvider)
    spans = []
    for statement in wrapper.module.body:
        where = positions[statement]
        spans.append((where.start.line, where.end.line))
    return spans


def test_located_statements_are_libcsts_statements_line_for_line():
    tree = grammar.parse(NEWER)
    spans = [(s.lineno, s.end_lineno) for s in tree.body]
    assert spans == _libcst_spans(NEWER)
    assert [type(s).__name__ for s in tree.body][:4] == [
        "Import",
        "FunctionDef",
        "ClassDef",
        "Assign",  # the type alias binds its name
    ]


def test_what_no_grammar_parses_says_which_grammar_failed():
    data = b"def f[T](x: T:\n    return x.cuda()\n"
    result = process_source("bad.py", data, Job(CHECK, Options(), True))
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert result.error.startswith("bad.py: cannot parse: line 1: ")
    assert result.error.endswith(
        f"(Python {version} grammar; libcst's parser fails too)"
    )


def test_plain_python_is_parsed_by_ast_alone(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("libcst parsed a file ast reads")

    monkeypatch.setattr(cst, "parse_module", refuse)
    assert ast.dump(grammar.parse("x = 1\n")) == ast.dump(ast.parse("x = 1\n"))
