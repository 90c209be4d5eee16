"""The calls and names torchport emits exist in the installed torch and take the
arguments it passes them (checked against ``inspect.signature``).

For every catalogue row that emits a call, each way of passing each parameter of the
CUDA function (by position, by keyword) is rewritten by torchport; the call it emits
must bind to the signature of the function it calls on CUDA (and on the CPU, where
the call is not guarded), or the site must be reported instead.
"""

from __future__ import annotations

import ast
import inspect
import re
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import libcst as cst
import pytest
import torch

from codemod import catalog
from codemod.model.options import Options
from codemod.passes.guards import is_guard
from codemod.rewrite.pipeline import rewrite_source

OPTIONS = Options(target_torch=(2, 13), unsafe_fixes=True)
# A portable form that is a function: `{torch}.a.b` or the device module's.
FUNCTION = re.compile(r"\{torch\}(?:\.get_device_module\(\{device\}\))?(?:\.\w+)+")


def _resolve(dotted: str):
    obj = torch
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


# Every catalogue row whose CUDA name is called and becomes a call of a function.
ROWS = [
    row
    for row in catalog.ROWS
    if row.kind == "name"
    and FUNCTION.fullmatch(row.portable or "")
    and callable(_resolve(row.name))
]


def _targets(row: catalog.Row, guarded: bool = False) -> List[Tuple[str, Callable]]:
    """(where, function) the emitted call reaches: on CUDA the device module is
    torch.cuda; on the CPU it is torch.cpu, reached only where the call is not
    guarded (``guarded``: behind ``_DEVICE().type != "cpu"``)."""
    template = row.portable or ""
    if "{device}" not in template:
        name = template.format(torch="torch")
        return [("cuda and cpu", _resolve(name))]
    attr = template.rsplit(".", 1)[1]
    targets = [("cuda", getattr(torch.cuda, attr))]
    if not guarded:
        targets.append(("cpu", getattr(torch.cpu, attr)))
    return targets


@lru_cache(maxsize=None)
def _stub_signature(name: str) -> inspect.Signature:
    """The signature of a builtin class of torch (``torch.Stream``), as the first
    ``__new__`` of its stub in the installed torch's ``torch/_C/__init__.pyi`` says."""
    stubs = Path(torch.__file__).parent / "_C" / "__init__.pyi"
    for node in ast.parse(stubs.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            new = next(
                (
                    f
                    for f in node.body
                    if isinstance(f, ast.FunctionDef) and f.name == "__new__"
                ),
                None,
            )
            if new is None:
                break
            args = new.args
            args.posonlyargs, args.args = args.posonlyargs, args.args[1:]  # self
            for arg in args.posonlyargs + args.args + args.kwonlyargs:
                if arg.annotation is not None:  # kept as its text
                    arg.annotation = ast.Constant(ast.unparse(arg.annotation))
            stub = ast.parse("def stub(): pass").body[0]
            stub.args = args  # type: ignore[attr-defined]
            namespace: Dict[str, object] = {}
            module = ast.fix_missing_locations(ast.Module([stub], []))
            exec(compile(module, "<stub>", "exec"), namespace)
            return inspect.signature(namespace["stub"])  # type: ignore[arg-type]
    raise ValueError(f"no stub of torch.{name}.__new__")


def _signature(function) -> inspect.Signature:
    """``inspect.signature``, or for a builtin class of torch its stub's."""
    try:
        return inspect.signature(function)
    except ValueError:
        if isinstance(function, type) and getattr(torch, function.__name__, None) is (
            function
        ):
            return _stub_signature(function.__name__)
        raise


def _samples(function) -> List[str]:
    """Argument lists that call ``function`` with each parameter by position and by
    keyword (the others left to their defaults where they have one)."""
    try:
        params = list(_signature(function).parameters.values())
    except (TypeError, ValueError):
        return [""]
    named = [
        p
        for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    required = [p for p in named if p.default is p.empty]
    calls = [""] if not required else []
    for i, p in enumerate(named):
        before = [q for q in named[:i] if q.default is q.empty]
        head = (
            ["0"] * len(before)
            if all(q.kind != q.KEYWORD_ONLY for q in before)
            else None
        )
        if head is not None and p.kind != p.KEYWORD_ONLY:
            calls.append(", ".join(["0"] * (i + 1)))
        if p.kind != p.POSITIONAL_ONLY:
            rest = [f"{q.name}=0" for q in required if q is not p]
            calls.append(", ".join(rest + [f"{p.name}=0"]))
    return list(dict.fromkeys(calls))


def _emitted(code: str, callee: str) -> Tuple[Optional[cst.Call], bool]:
    """The first call of ``callee`` in ``code``, and whether it is the accelerator
    branch of ``... if _DEVICE().type != "cpu" else ...``."""
    found: List[cst.Call] = []
    guarded: List[cst.CSTNode] = []

    class Finder(cst.CSTVisitor):
        def visit_IfExp(self, node: cst.IfExp) -> None:
            if is_guard(node.test, "_DEVICE"):
                guarded.append(node.body)

        def visit_Call(self, node: cst.Call) -> None:
            if cst.Module([]).code_for_node(node.func) == callee:
                found.append(node)

    cst.parse_module(code).visit(Finder())
    if not found:
        return None, False
    return found[0], found[0] in guarded


def _binds(function, call: cst.Call) -> None:
    """Bind the call's arguments to ``function``'s signature; a builtin without one
    is called, on the CPU."""
    positional = [object() for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: object() for a in call.args if a.keyword is not None}
    try:
        signature = _signature(function)
    except ValueError:
        code = cst.Module([]).code_for_node(call)
        eval(code, {"torch": torch, "_DEVICE": lambda: torch.device("cpu")})
        return
    signature.bind(*positional, **keywords)


# Known not to bind yet, with the reason: strict, so that a fix removes its entry.
NOT_YET: Dict[str, str] = {}


# Builtins without a signature that take arguments: calls of them, which the CUDA
# function itself accepts on the CPU (test_builtin_samples_are_calls_of_the_original).
BUILTIN_SAMPLES: Dict[str, List[str]] = {
    "torch.set_autocast_gpu_dtype": ["torch.bfloat16"],
    "torch.set_autocast_enabled": ["False"],
}


def _cases():
    for row in ROWS:
        for args in BUILTIN_SAMPLES.get(row.name) or _samples(_resolve(row.name)):
            case = f"{row.name}({args})"
            marks = ()
            if case in NOT_YET:
                marks = pytest.mark.xfail(reason=NOT_YET[case], strict=True)
            yield pytest.param(row, args, id=case, marks=marks)


@pytest.mark.parametrize("name", sorted(BUILTIN_SAMPLES))
def test_builtin_samples_are_calls_of_the_original(name):
    # The samples set autocast's process-wide state: put it back for later tests.
    dtype, enabled = torch.get_autocast_gpu_dtype(), torch.is_autocast_enabled()
    try:
        for args in BUILTIN_SAMPLES[name]:
            eval(f"{name}({args})", {"torch": torch})
    finally:
        torch.set_autocast_gpu_dtype(dtype)
        torch.set_autocast_enabled(enabled)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_target_exists(row):
    for _, target in _targets(row, guarded=row.cpu is not None):
        assert callable(target)


@pytest.mark.parametrize("row, args", list(_cases()))
def test_emitted_call_binds_to_the_target(row, args):
    source = f"import torch\n\nresult = {row.name}({args})\n"
    result = rewrite_source(source, OPTIONS)
    callee = (row.portable or "").format(torch="torch", device="_DEVICE()")
    call, guarded = _emitted(result.code, callee)
    if call is None:  # left as it is: then it must be reported
        assert row.name in result.code
        assert any(d.code == row.code for d in result.diagnostics), result.code
        return
    assert guarded or row.cpu is None, result.code
    for where, target in _targets(row, guarded):
        if target is _resolve(row.name):
            continue  # the same object under another name
        try:
            _binds(target, call)
        except TypeError as error:
            pytest.fail(f"on {where}: {result.code.strip()}: {error}")


@pytest.mark.parametrize(
    "name, params", [(name, params) for name, params in catalog.PARAMS.items()]
)
def test_params_match_both_signatures(name, params):
    """The catalogue's parameters are the CUDA function's, and say rightly how the
    portable form takes each one."""
    row = next(r for r in catalog.ROWS if r.name == name)
    cuda = [
        p
        for p in inspect.signature(_resolve(name)).parameters.values()
        if p.kind != p.VAR_KEYWORD
    ]
    assert [p.name for p in params] == [p.name for p in cuda]
    target = _signature(_resolve(row.portable.format(torch="torch"))).parameters
    ordered = [p for p in target.values() if p.kind != p.KEYWORD_ONLY]
    assert len(ordered) >= len([p for p in params if not p.keyword_only])
    for index, param in enumerate(params):
        if param.keyword_only:  # named the same there, or dropped as not honoured
            theirs = target.get(param.name)
            if theirs is None:
                assert param.default_only, name
                continue
            assert theirs.kind == theirs.KEYWORD_ONLY, name
            assert not param.default_only or theirs.default is False, name
            continue
        theirs = ordered[index]
        assert param.name == theirs.name or param.positional_only, name
        assert param.positional_only == (theirs.kind == theirs.POSITIONAL_ONLY), name
        if param.name == "device":
            annotation = str(theirs.annotation)
            takes_a_device = "torch.device" in annotation or "Device" in annotation
            assert param.index_only != takes_a_device, (name, theirs.annotation)


def test_every_accelerator_row_has_params():
    """A ``torch.accelerator`` function is not the CUDA one: its arguments must be
    mapped, never passed on as written."""
    for row in ROWS:
        if (row.portable or "").startswith("{torch}.accelerator."):
            assert catalog.PARAMS.get(row.name) is not None, row.name


def test_index_only_argument_is_reported():
    source = (
        'import torch\n\nwith torch.cuda.device(torch.device("cuda", 1)):\n    pass\n'
    )
    result = rewrite_source(source, Options(target_torch=(2, 13)))
    assert "torch.cuda.device(" in result.code
    assert "TP303" in [d.code for d in result.diagnostics]


def test_out_of_memory_error_is_one_class():
    # TP318 renames the exception only because this holds (torch >= 2.5).
    assert torch.cuda.OutOfMemoryError is torch.OutOfMemoryError
