"""Device pickers of the program's own (passes/device_pickers.py), and a stream
context that receives a stream made elsewhere (TP305)."""

from __future__ import annotations

import ast
import textwrap

import torch

from codemod.model.options import Options
from codemod.passes.device_pickers import picked_cuda
from codemod.rewrite.pipeline import rewrite_source


def _picked(source: str):
    source = textwrap.dedent(source)
    return sorted(picked_cuda(ast.parse(source), source.splitlines()))


def test_a_function_returning_two_device_names_picks():
    assert _picked("""\
        def pick():
            if ok():
                return "cuda"
            if other():
                return "mps"
            return "cpu"
        """) == [(3, 16)]


def test_one_name_or_a_nested_function_is_no_picker():
    assert _picked("""\
        def only():
            return "cuda"

        def outer():
            def inner():
                return "cpu"
            return "cuda"
        """) == []


def _rewrite(source: str):
    return rewrite_source(textwrap.dedent(source), Options(target_torch=(2, 13)))


def test_a_pickers_cuda_ports_and_its_test_is_widened():
    result = _rewrite("""\
        import torch

        def pick():
            if torch.cuda.is_available():
                return "cuda"
            return "cpu"
        """)
    assert "torch.cuda" not in result.code and "return _DEVICE().type" in result.code
    assert all(d.applied for d in result.diagnostics)


def test_a_stream_handed_in_is_entered_where_it_is_one():
    result = _rewrite("""\
        import torch

        def run(s, x):
            with torch.cuda.stream(s):
                return x * 2
        """)
    assert "s if s is not None and _DEVICE().type != " in result.code
    assert all(d.applied for d in result.diagnostics)
    namespace: dict = {}
    exec(result.code, namespace)
    for stream in (None, torch.cpu.Stream()):
        assert namespace["run"](stream, torch.ones(2)).tolist() == [2.0, 2.0]
