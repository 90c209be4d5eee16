"""Availability flags followed to the tests that read them (passes/cuda_flags.py)."""

from __future__ import annotations

import ast
import textwrap

from codemod.passes.cuda_flags import kept_flags
from codemod.passes.names import ModuleFacts


def _kept_lines(source: str):
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    facts = ModuleFacts.of(tree, source)
    return sorted(line for line, _ in kept_flags(tree, facts, source.splitlines()))


def test_a_count_compared_before_data_parallel_is_kept():
    assert _kept_lines("""\
        import torch
        n = torch.cuda.device_count()
        if n > 1:
            model = torch.nn.DataParallel(model)
        """) == [2]


def test_a_name_derived_from_the_count_is_followed():
    assert _kept_lines("""\
        import torch
        n = torch.cuda.device_count()
        ids = list(range(n))
        several = len(ids) > 1
        if several:
            model = torch.nn.DataParallel(model, device_ids=ids)
        """) == [2]


def test_a_list_built_from_the_call_is_a_flag_too():
    assert _kept_lines("""\
        import torch
        ids = list(range(torch.cuda.device_count()))
        if len(ids) > 1:
            model = torch.nn.DataParallel(model)
        """) == [2]


def test_a_count_that_guards_portable_code_is_widened():
    assert _kept_lines("""\
        import torch
        n = torch.cuda.device_count()
        batch = 4 * max(n, 1)
        if n > 1:
            print("several", batch)
        """) == []


def test_a_name_not_bound_from_the_count_is_not_followed():
    assert _kept_lines("""\
        import torch
        n = torch.cuda.device_count()
        m = 2
        print(n)
        if m > 1:
            model = torch.nn.DataParallel(model)
        """) == []


def test_a_flag_that_picks_a_launchers_gpu_is_kept():
    assert _kept_lines("""\
        import torch
        use_gpu = torch.cuda.is_available()
        trainer = Trainer(accelerator="gpu" if use_gpu else "cpu")
        """) == [2]


def test_a_flag_a_function_named_for_cuda_returns_is_kept():
    assert _kept_lines("""\
        import torch
        def is_cuda_available():
            available = torch.cuda.is_available()
            return available
        def has_accelerator():
            found = torch.cuda.is_available()
            return found
        """) == [3]
