"""A module-level accessor asks for the device once, whatever the module does with
the name ``functools``: its cache reads a binding of the module's own scope (never
a function's local import, never a word in a comment or a string) or an import
torchport adds."""

from __future__ import annotations

import ast
import textwrap
from collections import Counter
from unittest import mock

import pytest
import torch

from codemod.model.options import Options
from codemod.rewrite.pipeline import rewrite_source

NAME = Options().device_name

SOURCES = {
    "local import": """
        import torch

        def g():
            import functools
            return functools.reduce(lambda a, b: a + b, [1, 2])

        x = torch.ones(2).cuda()
    """,
    "local alias": """
        import torch

        class A:
            def f(self):
                import functools as ft
                from functools import cache
                return ft, cache

        x = torch.ones(2).cuda()
    """,
    "words": '''
        """Uses functools, as its comments say."""
        # functools.cache would be the thing here
        import torch

        NOTE = "functools"
        x = torch.ones(2).cuda()
    ''',
    "partial": """
        from functools import partial

        import torch

        x = partial(torch.ones, 2)().cuda()
    """,
    "alias": """
        import functools as ft

        import torch

        x = torch.ones(2).cuda()
    """,
    "cache name": """
        from functools import cache

        import torch

        x = torch.ones(2).cuda()
    """,
    "taken": """
        import torch

        functools = None
        x = torch.ones(2).cuda()
    """,
    "taken by an import": """
        import torch
        from os import path as functools

        x = torch.ones(2).cuda()
    """,
    "imported after the first use": """
        import torch

        x = torch.ones(2).cuda()
        import functools
    """,
    "rebound after the import": """
        import functools

        import torch

        def functools():
            return 1

        x = torch.ones(2).cuda()
    """,
}


def _accessor(code: str) -> ast.FunctionDef:
    return next(
        s
        for s in ast.parse(code).body
        if isinstance(s, ast.FunctionDef) and s.name == NAME
    )


def _asks(code: str, module=torch.accelerator, query="device_count") -> int:
    """How many times the module asks for the device when the accessor is called
    three times."""
    namespace = {"__name__": "ported"}
    with mock.patch.object(module, query, return_value=0) as count:
        exec(compile(code, "ported.py", "exec"), namespace)
        for _ in range(3):
            assert namespace[NAME]() == torch.device("cpu")
    return count.call_count


@pytest.mark.parametrize("case", sorted(SOURCES))
def test_the_accessor_asks_once(case):
    source = textwrap.dedent(SOURCES[case]).lstrip()
    code = rewrite_source(source, Options()).code
    assert _accessor(code).decorator_list, code
    assert _asks(code) == 1
    assert rewrite_source(code, Options()).code == code


@pytest.mark.parametrize(
    "case, decorator, added",
    [
        ("alias", "ft.cache", ""),
        ("cache name", "cache", ""),
        ("partial", "functools.cache", "import functools"),
        ("local import", "functools.cache", "import functools"),
        ("taken", "_functools.cache", "import functools as _functools"),
        ("imported after the first use", "functools.cache", "import functools"),
    ],
)
def test_the_cache_reuses_a_module_binding_or_adds_one(case, decorator, added):
    source = textwrap.dedent(SOURCES[case]).lstrip()
    code = rewrite_source(source, Options()).code
    assert ast.unparse(_accessor(code).decorator_list[0]) == decorator
    new = Counter(code.splitlines()) - Counter(source.splitlines())
    assert [line for line in new if line.startswith("import")] == (
        [added] if added else []
    )


def test_an_older_target_uses_the_modules_lru_cache():
    source = (
        "from functools import lru_cache\n\nimport torch\n\nx = torch.ones(2).cuda()\n"
    )
    code = rewrite_source(source, Options(target_torch=(2, 4))).code
    assert ast.unparse(_accessor(code).decorator_list[0]) == "lru_cache(maxsize=None)"
    assert "import functools" not in code
    assert _asks(code, torch.cuda, "is_available") == 1
