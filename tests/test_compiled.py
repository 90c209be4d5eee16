"""Functions TorchScript or torch.compile compile keep their sites as written and
report them: the device accessor cannot be scripted, and dynamo stops at its query.

fixtures/binding/compiled_functions is the program: its after file scripts and
compiles (``fullgraph=True``, the eager backend: a graph break raises) on the CPU in
tests/test_fixtures.py. Here: which functions count as compiled, and that the same
program with its compiled functions ported as any other fails on the CPU.
"""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from codemod.model.options import Options
from codemod.passes import compiled
from codemod.passes.names import ModuleFacts
from codemod.rewrite.pipeline import rewrite_source
from tests.conftest import CPU_ENV
from tests.fixture_cases import FIXTURES

PROGRAM = FIXTURES / "binding" / "compiled_functions.before.py"

FORMS = """\
import torch as th
from torch import compile as compile_fn
from torch import jit


@th.jit.script
def scripted(n: int):
    return helper(n)


def helper(n: int):
    return n


@th.compile
def bare(x):
    return x


@compile_fn(fullgraph=True)
def called(x):
    return x


@jit.script
def through_jit(n: int):
    return n


def assigned(x):
    return x


def traced(x):
    return x


def plain(x):
    return x


assigned = th.compile(assigned, fullgraph=True)
done = th.jit.trace(traced, (th.ones(1),))
"""


def test_the_compiled_functions_are_found():
    tree = ast.parse(FORMS)
    facts = ModuleFacts.of(tree, FORMS)
    spans = compiled.compiled_functions(tree, facts)
    names = {
        node.name: compiler
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        for first, last, compiler in spans
        if first <= node.lineno <= last
    }
    assert names == {
        "scripted": compiled.SCRIPT,
        "helper": compiled.SCRIPT,  # called from a scripted function
        "bare": compiled.COMPILE,
        "called": compiled.COMPILE,
        "through_jit": compiled.SCRIPT,
        "assigned": compiled.COMPILE,
        "traced": compiled.TRACE,
    }  # a plain function is no compiled one


def _run(code: str, tmp_path) -> subprocess.CompletedProcess:
    program = tmp_path / "program.py"
    program.write_text(code, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(program)],
        capture_output=True,
        text=True,
        env=CPU_ENV,
        timeout=300,
    )


def test_the_ported_program_scripts_and_compiles_on_the_cpu(tmp_path):
    result = rewrite_source(PROGRAM.read_text(encoding="utf-8"), Options())
    assert result.changed  # the plain function is ported
    proc = _run(result.code, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    reported = [d for d in result.diagnostics if compiled.ADVICE in d.message]
    assert len(reported) == 9 and not any(d.applied for d in reported)


@pytest.mark.parametrize(
    "compiler, error",
    [(compiled.SCRIPT, "RuntimeError"), (compiled.COMPILE, "Unsupported")],
    ids=["script", "compile"],
)
def test_ported_as_any_other_the_compiled_functions_fail(
    tmp_path, monkeypatch, compiler, error
):
    """Not a blind test: with the compiled functions of one compiler taken for
    plain ones, the port fails on the CPU, where scripting or dynamo meets the
    accessor."""
    found = compiled.compiled_functions

    def others(tree, facts):
        return [span for span in found(tree, facts) if span[2] != compiler]

    monkeypatch.setattr(compiled, "compiled_functions", others)
    result = rewrite_source(PROGRAM.read_text(encoding="utf-8"), Options())
    proc = _run(result.code, tmp_path)
    assert proc.returncode != 0 and error in proc.stderr
