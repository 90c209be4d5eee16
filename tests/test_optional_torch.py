"""A module that imports without torch still does once ported.

Torch is optional where a module imports it only in a top-level block (``if
is_torch_available():``, ``if importlib.util.find_spec("torch"):``, ``try:``) or
only inside functions: the device is bound where torch is, and a fix that would
read it on a line that runs without torch is reported instead.

Every fixture whose before file imports with torch absent (``sys.modules["torch"]
= None``, so that ``import torch`` raises and ``find_spec("torch")`` is None) must
have an after file that imports so too.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap

import pytest

from codemod.model.options import Options
from codemod.rewrite.pipeline import rewrite_source
from tests.conftest import CPU_ENV
from tests.fixture_cases import after_of, before_files, case_id

NAME = Options().device_name

# Imports each path given on stdin as a module (not __main__) with torch absent.
_CHILD = """
import contextlib, io, json, runpy, sys
sys.modules["torch"] = None
answers = sys.stdout
for line in sys.stdin:
    path = json.loads(line)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            runpy.run_path(path, run_name="imported_without_torch")
        answers.write(json.dumps(None) + "\\n")
    except BaseException as error:
        answers.write(json.dumps(f"{type(error).__name__}: {error}") + "\\n")
    answers.flush()
"""


def _without_torch(paths):
    """The error each file raises when imported without torch (None: none)."""
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD],
        input="".join(json.dumps(str(p)) + "\n" for p in paths),
        capture_output=True,
        text=True,
        env=CPU_ENV,
        timeout=300,
    )
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(answers) == len(paths), proc.stderr[-2000:]
    return answers


def _may_import_without_torch(path) -> bool:
    """No top-level statement imports torch (or part of it)."""
    for stmt in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(stmt, ast.Import):
            if any(a.name.split(".")[0] == "torch" for a in stmt.names):
                return False
        elif isinstance(stmt, ast.ImportFrom) and not stmt.level:
            if (stmt.module or "").split(".")[0] == "torch":
                return False
    return True


CANDIDATES = [b for b in before_files() if _may_import_without_torch(b)]


@pytest.fixture(scope="module")
def imports_without_torch():
    files = [f for b in CANDIDATES for f in (b, after_of(b))]
    answers = _without_torch(files)
    return {
        case_id(b): (answers[2 * i], answers[2 * i + 1])
        for i, b in enumerate(CANDIDATES)
    }


def test_fixtures_with_optional_torch_are_checked(imports_without_torch):
    optional = [c for c, (before, _) in imports_without_torch.items() if not before]
    for case in (
        "binding/optional_torch_if",
        "binding/optional_torch_find_spec",
        "binding/optional_torch",
        "binding/lazy_torch_alias",
        "binding/lazy_torch_import",
    ):
        assert case in optional


@pytest.mark.parametrize("case", [case_id(b) for b in CANDIDATES])
def test_an_after_file_imports_without_torch_where_its_before_file_did(
    imports_without_torch, case
):
    before, after = imports_without_torch[case]
    if before is None:
        assert after is None


def _rewrite(source: str, **options) -> str:
    return rewrite_source(textwrap.dedent(source).lstrip(), Options(**options)).code


@pytest.mark.parametrize(
    "test",
    [
        "is_torch_available()",
        'importlib.util.find_spec("torch") is not None',
        'importlib.util.find_spec("torch")',
    ],
)
def test_the_device_is_bound_in_the_block_that_imports_torch(test, tmp_path):
    code = _rewrite(f"""
        import importlib.util

        def is_torch_available():
            return importlib.util.find_spec("torch") is not None

        if {test}:
            import torch
        else:
            torch = None

        def ones():
            return torch.ones(2).cuda()
        """)
    tree = ast.parse(code)
    assert not any(
        isinstance(s, ast.Import) and "torch" in ast.unparse(s) for s in tree.body
    )
    block = next(s for s in tree.body if isinstance(s, ast.If))
    assert any(isinstance(s, ast.FunctionDef) and s.name == NAME for s in block.body)
    path = tmp_path / "ported.py"
    path.write_text(code)
    assert _without_torch([path]) == [None]
    assert _rewrite(code) == code


def test_a_read_at_import_outside_the_block_is_reported():
    source = """
        import importlib.util

        if importlib.util.find_spec("torch"):
            import torch

        default_device = "cuda"

        class Config:
            device = "cuda"

        def to(x, device="cuda"):
            return x.to(device)

        def move(x):
            return x.cuda()
        """
    result = rewrite_source(
        textwrap.dedent(source).lstrip(), Options(), positions="input"
    )
    left = {d.line: d for d in result.diagnostics if not d.applied}
    assert sorted(left) == [6, 9, 11]
    assert all(
        "imported only in the block at line 4" in d.message for d in left.values()
    )
    assert "x.cuda()" not in result.code and 'default_device = "cuda"' in result.code


def test_torch_imported_as_another_name_in_functions_only():
    code = _rewrite("""
        def main():
            import torch as th
            th.cuda.synchronize()
            return th.ones(2).cuda()
        """)
    assert "import torch\n" not in code
    assert "th.accelerator.synchronize()" in code
    assert f"    def {NAME}():" in code and "th.accelerator.device_count()" in code
    namespace = {}
    exec(compile(code, "ported.py", "exec"), namespace)
    assert namespace["main"]().device.type == "cpu"


def test_a_function_without_the_import_is_reported_in_a_lazy_module():
    source = """
        def main():
            import torch
            return torch.ones(2).cuda()

        def move(x):
            return x.cuda()
        """
    result = rewrite_source(
        textwrap.dedent(source).lstrip(), Options(), positions="input"
    )
    left = [d for d in result.diagnostics if not d.applied]
    assert [(d.line, d.code) for d in left] == [(6, "TP201")]
    assert "inside functions" in left[0].message
    assert not result.code.startswith("import torch")


def test_a_module_that_imports_torch_is_unchanged_by_this():
    code = _rewrite(
        """
        import torch

        if torch.__version__:
            import torch.nn

        DEVICE_NAME = "cuda"
        """,
        unsafe_fixes=True,
    )  # a read at import, where the original asked none
    assert "DEVICE_NAME = " in code and 'DEVICE_NAME = "cuda"' not in code
