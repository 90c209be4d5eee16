"""A value's type followed to where it is a device: a name its scope binds once to
``torch.device(...)`` (``.cuda(device)`` is ``.to(device)``), and an argparse option
of ``type=int`` (an index wherever it is a device)."""

from __future__ import annotations

import pytest
import torch

from codemod.model.options import Options
from codemod.passes.device_positions import int_options
from codemod.rewrite.pipeline import rewrite_source

HEAD = "import argparse\n\nimport torch\n\n\n"


def _rewrite(source: str, **options):
    result = rewrite_source(HEAD + source, Options(**options))
    return result.code, [(d.code, d.fix, d.applied) for d in result.diagnostics]


def test_cuda_of_a_bound_device_is_to_that_device():
    code, found = _rewrite(
        "def f(rank):\n"
        '    device = torch.device(f"cuda:{rank}")\n'
        "    return torch.ones(2).cuda(device)\n"
    )
    assert "torch.ones(2).to(device)" in code
    assert ("TP201", "safe", True) in found
    namespace = {}
    exec(compile(code, "<fixed>", "exec"), namespace)  # noqa: S102
    assert namespace["f"](0).device == torch.device("cpu")  # runs where it raised


@pytest.mark.parametrize(
    "body",
    [
        "def f(device):\n    return torch.ones(2).cuda(device)\n",  # a parameter
        "def f(rank):\n    device = torch.device('cuda')\n    device = rank\n"
        "    return torch.ones(2).cuda(device)\n",  # bound twice
    ],
)
def test_a_name_of_unknown_type_stays_an_unsafe_index(body):
    code, found = _rewrite(body)
    assert ("TP201", "unsafe", False) in found
    assert ".cuda(device)" in code


def test_an_int_option_given_as_a_device_is_an_index():
    source = (
        'parser = argparse.ArgumentParser()\nparser.add_argument("--device", '
        "type=int, default=0)\nargs = parser.parse_args([])\n"
        "x = torch.ones(2).to(args.device)\n"
        "print(torch.cuda.is_available())\n"
    )
    code, found = _rewrite(source)
    assert ("TP102", "safe", True) in found
    namespace = {}
    exec(compile(code, "<fixed>", "exec"), namespace)  # noqa: S102
    assert namespace["x"].device == torch.device("cpu")


def test_a_string_option_is_no_index():
    source = (
        'parser = argparse.ArgumentParser()\nparser.add_argument("--device", '
        'default="cuda")\nargs = parser.parse_args([])\n'
        "x = torch.ones(2).to(args.device)\n"
        "print(torch.cuda.is_available())\n"
    )
    code, found = _rewrite(source)
    assert "TP102" not in {c for c, _, _ in found}


def test_int_options_are_read_from_each_add_argument():
    source = (
        'p.add_argument("--gpu-id", type=int)\n'
        'p.add_argument("-r", "--rank", type=int, help=str(len("x")))\n'
        'p.add_argument("--n", dest="count",\n    type=int)\n'
        'p.add_argument("--name", type=str)\n'
        'p.add_argument("--lr", type=float)\n'
    )
    assert int_options(source) == {"gpu_id", "rank", "count"}
