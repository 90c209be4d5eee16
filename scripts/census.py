#!/usr/bin/env python
"""Census of CUDA-specific sites in Python source, independent of the codemod package.

Uses only the standard library (``ast``), so it can judge torchport's output without sharing
its bugs.  A *site* is one of these kinds:

``device-string``   a string constant equal to ``"cuda"`` or matching ``^cuda:\\d+$``
                    (docstrings, dict keys and subscript keys are skipped)
``device-format``   ``"cuda:{}"`` / ``"cuda:%d"`` style templates (``.format`` / ``%``)
``device-fstring``  an f-string whose text starts with ``cuda:``
``.cuda()``         a ``.cuda(...)`` method call
``.is_cuda``        the ``.is_cuda`` attribute
``pin_memory``      a ``.pin_memory(...)`` call or a ``pin_memory=True`` keyword argument,
                    unless guarded by ``if torch.accelerator.is_available()`` / ``!= "cpu"``
                    or by a flag that picks the device (``"cuda" if F else "cpu"``)
``dataloader-pin``  ``pin_memory=True`` given to a ``...DataLoader(...)`` (portable since
                    torch 2.7: it pins for the current accelerator and only warns on CPU)
``torch.cuda``      any name or attribute chain resolving to ``torch.cuda`` or below, including
                    ``from torch.cuda... import ...`` statements
``backend-flag``    ``torch.backends.cudnn.*`` and ``torch.backends.cuda.*``
``nccl``            the string ``"nccl"`` (not as a dict key), ``Backend.NCCL``,
                    ``torch.distributed.is_nccl_available``
``env-var``         the strings ``"CUDA_VISIBLE_DEVICES"``, ``"CUDA_LAUNCH_BLOCKING"``,
                    ``"PYTORCH_CUDA_ALLOC_CONF"`` and ``"CUBLAS_WORKSPACE_CONFIG"`` (in every
                    form: ``os.environ`` keys, ``os.getenv``/``putenv``, ``env=`` dicts)
``vendor-import``   ``import pynvml`` / ``import apex`` (and ``from`` forms)
``cuda-extension``  ``torch.utils.cpp_extension.CUDAExtension``
``profiler-cuda``   ``ProfilerActivity.CUDA``; the profiler's CUDA columns as strings
                    (``sort_by="cuda_time_total"``) or attributes (``e.cuda_time_total``)
``legacy-type-string`` a CUDA tensor type named by a string (``"torch.cuda.LongTensor"``)
``get-device``      ``x.get_device()`` given as a device (``device=``, ``.to(...)``)
``cuda-graph``      ``torch.compile(backend="cudagraphs")``, the ``"triton.cudagraphs"``
                    option, ``torch._inductor.config.triton.cudagraphs``
``cuda-build``      ``torch.version.cuda``

``torch.cuda`` also covers ``from torch.cuda import *`` and the bare uses of torch.cuda
functions it brings in, ``torch.Tensor.cuda`` / ``torch.nn.Module.cuda`` passed as a
function (``map(torch.Tensor.cuda, xs)``), and a ``from torch.cuda... import`` taken
when another import fails (``except ImportError:``), whose later uses do not say which
import they got. ``cuda-extension`` also covers ``torch.utils.cpp_extension.CUDA_HOME``.

Code in the body of ``if <device>.type == "cuda":`` (or of such a conditional expression,
or after such a test in an ``and``: ``dev.type == "cuda" and torch.cuda.f()``)
runs on CUDA alone and is no site, nor is the ``"cuda"`` of that test, nor a function
named under "cuda" in a table keyed by device type (``{"cuda": torch.cuda.empty_cache,
"xpu": torch.xpu.empty_cache}[dev.type]()``), nor the ``"cuda"`` of a membership test
in a list that names another accelerator too (``device not in ["cuda", "xpu"]``): like
the table, it says which devices get the code and is false on any other. Nor is the
``"cuda"`` an AMP device type falls back to where there is no accelerator
(``X.type if X.type != "cpu" else "cuda"``): CUDA's autocast, disabled there as before.

Names are resolved through a small per-file import map (``import torch as th``,
``from torch import cuda``, ``from torch.cuda import amp``,
``from torch.cuda.amp import GradScaler``, ``import torch.backends.cudnn as cudnn``...).

Command line::

    python scripts/census.py PATH [PATH ...] [--json] [--summary]

prints ``path:line:col: KIND snippet`` (col is 1-based) or, with ``--json``, a JSON list of
``{path, line, col, kind, snippet}``.  Files that fail to parse are reported on stderr as
``path: error: ...`` and make the exit status 2; otherwise the exit status is 0.

As a library::

    from census import census, census_source
    sites = census(["some/folder"])          # list[Site]
    sites, errors = run_census(["some/folder"])
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Iterator

DEVICE_RE = re.compile(r"^cuda(:\d+)?$")
DEVICE_FORMAT_RE = re.compile(r"^cuda:(\{[^{}]*\}|%[ds])$")
# Raw-byte pre-filter: a file with none of these (lower-cased) cannot contain a site.
PREFILTER = (b"cuda", b"nccl", b"pin_memory", b"pynvml", b"apex", b"cublas")
GUARD_RE = re.compile(r"accelerator\.is_available\(\)|!=\s*['\"]cpu['\"]")
SKIP_DIRS = {
    ".git",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    "node_modules",
}
VENDOR_MODULES = {"pynvml", "apex"}
ENV_VARS = {
    "CUDA_VISIBLE_DEVICES",
    "CUDA_LAUNCH_BLOCKING",
    "PYTORCH_CUDA_ALLOC_CONF",
    "CUBLAS_WORKSPACE_CONFIG",
}
PROFILER_KEYS = {
    "cuda_time_total",
    "self_cuda_time_total",
    "cuda_memory_usage",
    "self_cuda_memory_usage",
}
LEGACY_TYPE_RE = re.compile(r"^torch\.cuda\.\w+Tensor$")
CUDA_GRAPH_STRINGS = {"cudagraphs", "triton.cudagraphs"}
METHOD_REFERENCES = {"torch.Tensor.cuda", "torch.nn.Module.cuda"}
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}
# What ``from torch.cuda import *`` brings in that code calls bare (torch.cuda's
# common functions and classes).
TORCH_CUDA_STAR = {
    "is_available",
    "device_count",
    "current_device",
    "set_device",
    "synchronize",
    "empty_cache",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "reset_peak_memory_stats",
    "manual_seed",
    "manual_seed_all",
    "get_device_name",
    "get_device_properties",
    "get_device_capability",
    "current_stream",
    "stream",
    "Stream",
    "Event",
}


@dataclass(frozen=True)
class Site:
    path: str
    line: int
    col: int  # 1-based
    kind: str
    snippet: str = ""

    def format(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.kind} {self.snippet}"


@dataclass(frozen=True)
class ParseError:
    path: str
    message: str


def iter_py_files(paths: Iterable[str | os.PathLike]) -> Iterator[Path]:
    """Yield ``*.py`` files under ``paths`` (files are yielded as given), sorted."""
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = []
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
                found.extend(Path(root, f) for f in files if f.endswith(".py"))
            yield from sorted(found)
        else:
            yield p


def _amp_fallbacks(tree: ast.AST) -> set[int]:
    """The ``"cuda"`` of an AMP device type that falls back to CUDA's where there is
    no accelerator (``X.type if X.type != "cpu" else "cuda"``, and at import time
    ``(torch.accelerator.current_accelerator() or torch.device("cuda")).type``): CUDA's
    autocast, disabled on a CPU host as the original's was, is no site."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.IfExp):
            test, orelse = node.test, node.orelse
            if (
                isinstance(orelse, ast.Constant)
                and orelse.value == "cuda"
                and isinstance(node.body, ast.Attribute)
                and node.body.attr == "type"
                and isinstance(test, ast.Compare)
                and isinstance(test.ops[0], ast.NotEq)
                and isinstance(test.comparators[0], ast.Constant)
                and test.comparators[0].value == "cpu"
                and ast.dump(test.left) == ast.dump(node.body)
            ):
                found.add(id(orelse))
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            first, last = node.values[0], node.values[-1]
            if (
                len(node.values) == 2
                and isinstance(first, ast.Call)
                and (_dotted(first.func) or [])[-2:]
                == ["accelerator", "current_accelerator"]
                and isinstance(last, ast.Call)
                and (_dotted(last.func) or [])[-1:] == ["device"]
                and len(last.args) == 1
                and isinstance(last.args[0], ast.Constant)
                and last.args[0].value == "cuda"
            ):
                found.add(id(last.args[0]))
    return found


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(
            node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        ):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                ids.add(id(body[0].value))
    return ids


def _bound_names(tree: ast.AST) -> set[str]:
    """Names a module defines (def, class) or assigns anywhere: not star-imported."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound


def _dotted(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def _device_flags(tree: ast.AST) -> set[str]:
    """``F`` of each ``"cuda" if F else "cpu"`` (or ``DEVICE().type if F else
    "cpu"``, a ported one): where ``F`` is true the program runs on the accelerator,
    as behind ``!= "cpu"``."""
    flags = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.IfExp):
            continue
        body, orelse = node.body, node.orelse
        if isinstance(body, ast.Call) and body.args and _dotted(body.func):
            body = body.args[0]  # torch.device("cuda")
        if isinstance(orelse, ast.Call) and orelse.args and _dotted(orelse.func):
            orelse = orelse.args[0]
        picks = (isinstance(body, ast.Constant) and body.value == "cuda") or (
            ast.unparse(body).endswith("().type")
        )
        if picks and isinstance(orelse, ast.Constant) and orelse.value == "cpu":
            flags.add(ast.unparse(node.test))
    return flags


DEVICE_TYPES = {"cpu", "mps", "xpu", "tpu", "npu", "hpu", "xla", "mtia", "meta"}


def _is_cuda_entry(table: ast.Dict, value: ast.AST) -> bool:
    """``value`` is a name or attribute under "cuda" in a table keyed by device type
    (``{"cuda": torch.cuda.empty_cache, "xpu": torch.xpu.empty_cache}``): looked up,
    and called, for CUDA alone."""
    keys = [k.value if isinstance(k, ast.Constant) else None for k in table.keys]
    if "cuda" not in keys or not DEVICE_TYPES & set(keys):
        return False
    return isinstance(value, (ast.Name, ast.Attribute)) and any(
        key == "cuda" and v is value for key, v in zip(keys, table.values)
    )


ACCELERATOR_TYPES = DEVICE_TYPES - {"cpu", "meta"}


def _in_device_list(node: ast.Constant, parents: dict) -> bool:
    """``"cuda"`` in ``x in ["cuda", "xpu"]``: a list of devices tested for membership
    that names another accelerator too."""
    listed = parents.get(id(node))
    compare = parents.get(id(listed))
    if not isinstance(listed, (ast.List, ast.Tuple, ast.Set)):
        return False
    if not isinstance(compare, ast.Compare) or compare.comparators != [listed]:
        return False
    if not isinstance(compare.ops[0], (ast.In, ast.NotIn)):
        return False
    names = {e.value for e in listed.elts if isinstance(e, ast.Constant)}
    return bool(names & ACCELERATOR_TYPES)


def _tests_torch_api(node: ast.AST) -> bool:
    """``if hasattr(torch, "accelerator") [and ...]``: a test of the torch the code
    runs on (the device binding torchport writes for a torch older than 2.6)."""
    test = node.test
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        test = test.values[0]
    return (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "hasattr"
        and len(test.args) == 2
        and isinstance(test.args[1], ast.Constant)
        and test.args[1].value == "accelerator"
    )


def _is_cuda_test(test: ast.AST) -> bool:
    """``<device>.type == "cuda"``: true on CUDA alone."""
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.left, ast.Attribute)
        and test.left.attr == "type"
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "cuda"
    )


class _Visitor(ast.NodeVisitor):
    def __init__(self, path: str, source: str):
        self.path = path
        self.source = source
        self.lines = source.splitlines()
        self.sites: list[Site] = []
        self.imports: dict[str, str] = {}
        self.skip: set[int] = set()
        self.parents: dict[int, ast.AST] = {}
        self.star_cuda = False  # the module does `from torch.cuda import *`
        self.bound: set[str] = set()  # names the module defines or assigns
        self.flags: set[str] = set()  # tests that pick the accelerator device

    # -- helpers ----------------------------------------------------------------------------
    def add(self, node: ast.AST, kind: str) -> None:
        if self._on_cuda_only(node):
            return
        line = getattr(node, "lineno", 0)
        col = getattr(node, "col_offset", 0) + 1
        snippet = ""
        if 0 < line <= len(self.lines):
            end_col = getattr(node, "end_col_offset", None)
            text = self.lines[line - 1]
            if getattr(node, "end_lineno", line) == line and end_col is not None:
                snippet = text[col - 1 : end_col]
            else:
                snippet = text[col - 1 :].rstrip() + " ..."
        if len(snippet) > 70:
            snippet = snippet[:67] + "..."
        self.sites.append(Site(self.path, line, col, kind, snippet))

    def _a_parameter(self, node: ast.AST, name: str) -> bool:
        """Whether ``name`` is a parameter of a function around ``node`` (a
        parameter named ``torch`` is not the module there)."""
        parent = self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                if name in {
                    a.arg for a in ast.walk(parent.args) if isinstance(a, ast.arg)
                }:
                    return True
            parent = self.parents.get(id(parent))
        return False

    def qualify(self, parts: list[str]) -> str:
        head = self.imports.get(parts[0], parts[0])
        return ".".join([head, *parts[1:]])

    # -- imports ----------------------------------------------------------------------------
    def collect_imports(self, tree: ast.AST) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.imports[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        self.imports.setdefault(top, top)
            elif self._in_import_fallback(node):
                continue  # the names are the first import's (its uses are not sites)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                if node.module == "torch.cuda" and any(
                    a.name == "*" for a in node.names
                ):
                    self.star_cuda = True
                for a in node.names:
                    if a.name != "*":
                        self.imports[a.asname or a.name] = f"{node.module}.{a.name}"

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            top = a.name.split(".")[0]
            if top in VENDOR_MODULES:
                self.add(node, "vendor-import")
            # Importing torch.cuda names works on every build; their uses are the sites.
            elif a.name.startswith(("torch.backends.cudnn", "torch.backends.cuda")):
                self.add(node, "backend-flag")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        mod = node.module or ""
        if node.level:
            return
        if mod == "torch.cuda" or mod.startswith("torch.cuda."):
            star = any(a.name == "*" for a in node.names)
            if star or self._in_import_fallback(node):
                self.add(node, "torch.cuda")
                return
        if mod.split(".")[0] in VENDOR_MODULES:
            self.add(node, "vendor-import")
            return
        full = [f"{mod}.{a.name}" for a in node.names]
        if any(
            f.startswith(("torch.backends.cudnn", "torch.backends.cuda")) for f in full
        ):
            self.add(node, "backend-flag")
        elif any(f.endswith(".CUDAExtension") for f in full):
            self.add(node, "cuda-extension")

    # -- names and attributes ---------------------------------------------------------------
    def classify_qualname(self, q: str) -> str | None:
        if q == "torch.cuda" or q.startswith("torch.cuda."):
            return "torch.cuda"
        if q.startswith(("torch.backends.cudnn", "torch.backends.cuda")):
            nxt = q[len("torch.backends.") :].split(".")[0]
            if nxt in ("cudnn", "cuda"):
                return "backend-flag"
        if q.endswith(".CUDAExtension") or q == "CUDAExtension":
            return "cuda-extension"
        if q.endswith("ProfilerActivity.CUDA"):
            return "profiler-cuda"
        if q.endswith("cpp_extension.CUDA_HOME"):
            return "cuda-extension"
        if q == "torch.version.cuda":
            return "cuda-build"
        if q.endswith("_inductor.config.triton.cudagraphs"):
            return "cuda-graph"
        if q.endswith("Backend.NCCL") or q.endswith("distributed.is_nccl_available"):
            return "nccl"
        return None

    def _in_import_fallback(self, node: ast.AST) -> bool:
        """Inside an ``except ImportError:`` (or ``ModuleNotFoundError``) handler."""
        parent = self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, ast.ExceptHandler):
                caught = parent.type
                names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
                return any((_dotted(n) or [""])[-1] in IMPORT_ERRORS for n in names)
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return False
            parent = self.parents.get(id(parent))
        return False

    def _is_outer(self, node: ast.AST) -> bool:
        parent = self.parents.get(id(node))
        return not (isinstance(parent, ast.Attribute) and parent.value is node)

    def _guarded(self, node: ast.AST) -> bool:
        """True when ``node`` sits in the body of an ``if``/conditional expression whose test
        checks for an accelerator (``torch.accelerator.is_available()``, ``... != "cpu"``),
        the portable guard for calls that raise on the CPU."""
        child, parent = node, self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                in_body = (
                    child is parent.body
                    if isinstance(parent, ast.IfExp)
                    else child in parent.body
                )
                test = ast.unparse(parent.test)
                if in_body and (GUARD_RE.search(test) or test in self.flags):
                    return True
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return False
            child, parent = parent, self.parents.get(id(parent))
        return False

    def _on_cuda_only(self, node: ast.AST) -> bool:
        """True in the body of ``if <device>.type == "cuda":`` (or of such a conditional
        expression, or after such a test in an ``and``), code kept for CUDA alone, and
        for the "cuda" of that test."""
        child, parent = node, self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, ast.Compare) and _is_cuda_test(parent):
                return True
            if isinstance(parent, ast.Dict) and _is_cuda_entry(parent, child):
                return True
            if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
                # `<device>.type == "cuda" and C`: C is evaluated on CUDA alone.
                before = parent.values[: parent.values.index(child)]
                if any(_is_cuda_test(v) for v in before):
                    return True
            if isinstance(parent, (ast.If, ast.IfExp)) and _is_cuda_test(parent.test):
                in_body = (
                    child is parent.body
                    if isinstance(parent, ast.IfExp)
                    else child in parent.body
                )
                if in_body:
                    return True
            if isinstance(parent, (ast.If, ast.IfExp)) and _tests_torch_api(parent):
                # the `else` of `hasattr(torch, "accelerator")`: a torch without the
                # accelerator API, where CUDA's check is the only one torch has
                orelse = parent.orelse
                if child is orelse or (isinstance(orelse, list) and child in orelse):
                    return True
            child, parent = parent, self.parents.get(id(parent))
        return False

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "is_cuda" and isinstance(node.ctx, ast.Load):
            # `self.is_cuda = ...` defines a user's attribute; reading one is a site.
            self.add(node, ".is_cuda")
        elif node.attr in PROFILER_KEYS and isinstance(node.ctx, ast.Load):
            self.add(node, "profiler-cuda")
        parts = _dotted(node)
        if (
            parts is not None
            and self._is_outer(node)
            and not self._a_parameter(node, parts[0])
        ):
            q = self.qualify(parts)
            kind = self.classify_qualname(q)
            if kind:
                self.add(node, kind)
            elif q in METHOD_REFERENCES and not self._is_called(node):
                self.add(node, "torch.cuda")
        self.generic_visit(node)

    def _is_called(self, node: ast.AST) -> bool:
        parent = self.parents.get(id(node))
        return isinstance(parent, ast.Call) and parent.func is node

    def _is_parameter(self, node: ast.Name) -> bool:
        """``node`` names a parameter of a function it is in (which hides an import:
        ``def check(CUDA_HOME): ...``)."""
        parent = self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = parent.args
                names = a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]
                if node.id in {arg.arg for arg in names if arg is not None}:
                    return True
            parent = self.parents.get(id(parent))
        return False

    def visit_Name(self, node: ast.Name) -> None:
        if (
            self._is_outer(node)
            and node.id in self.imports
            and not isinstance(node.ctx, ast.Store)  # `amp = False` binds, uses nothing
            and not self._is_parameter(node)
        ):
            kind = self.classify_qualname(self.imports[node.id])
            if kind:
                self.add(node, kind)
        elif (
            self.star_cuda
            and node.id in TORCH_CUDA_STAR
            and node.id not in self.bound
            and isinstance(node.ctx, ast.Load)
        ):
            self.add(node, "torch.cuda")  # from `from torch.cuda import *`

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if isinstance(f, ast.Attribute):
            parts = _dotted(f)
            q = self.qualify(parts) if parts else ""
            if f.attr == "cuda" and not q.startswith("torch."):
                self.add(f, ".cuda()")
            elif f.attr == "pin_memory" and not self._guarded(node):
                self.add(f, "pin_memory")
        callee = _dotted(f) or [""]
        device_args = [kw.value for kw in node.keywords if kw.arg == "device"]
        if callee[-1] == "to":
            device_args += node.args[:1]
        for value in device_args:
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Attribute)
                and value.func.attr == "get_device"
                and not value.args
            ):
                self.add(value, "get-device")
        for kw in node.keywords:
            if (
                kw.arg == "pin_memory"
                and isinstance(kw.value, ast.Constant)
                and kw.value.value is True
                and not self._guarded(node)
            ):
                loader = callee[-1].endswith("DataLoader")
                self.add(kw, "dataloader-pin" if loader else "pin_memory")
        self.generic_visit(node)

    # -- strings ----------------------------------------------------------------------------
    def visit_Dict(self, node: ast.Dict) -> None:
        for k in node.keys:
            if isinstance(k, ast.Constant):
                self.skip.add(id(k))
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        # `counts["cuda"]` looks a key up in a mapping: not a device, like a dict key.
        if isinstance(node.slice, ast.Constant):
            self.skip.add(id(node.slice))
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        first = node.values[0] if node.values else None
        if (
            isinstance(first, ast.Constant)
            and isinstance(first.value, str)
            and first.value.startswith("cuda:")
        ):
            self.add(node, "device-fstring")
        # the constant pieces of an f-string are not strings of their own
        for v in node.values:
            if isinstance(v, ast.FormattedValue):
                self.visit(v.value)

    def visit_Constant(self, node: ast.Constant) -> None:
        v = node.value
        if not isinstance(v, str):
            return
        if v in ENV_VARS:
            self.add(node, "env-var")
            return
        if v in PROFILER_KEYS:
            self.add(node, "profiler-cuda")
            return
        if v in CUDA_GRAPH_STRINGS:
            self.add(node, "cuda-graph")
            return
        if id(node) in self.skip:
            return
        if LEGACY_TYPE_RE.match(v):
            self.add(node, "legacy-type-string")
            return
        if DEVICE_RE.match(v):
            if not _in_device_list(node, self.parents):
                self.add(node, "device-string")
        elif DEVICE_FORMAT_RE.match(v):
            self.add(node, "device-format")
        elif v == "nccl":
            self.add(node, "nccl")

    def run(self, tree: ast.AST) -> list[Site]:
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[id(child)] = parent
        self.collect_imports(tree)
        self.skip |= _docstring_nodes(tree)
        self.skip |= _amp_fallbacks(tree)
        self.bound = _bound_names(tree)
        self.flags = _device_flags(tree)
        self.visit(tree)
        self.sites.sort(key=lambda s: (s.line, s.col, s.kind))
        return self.sites


def census_source(source: str, path: str = "<string>") -> list[Site]:
    """Sites in one source string.  Raises SyntaxError/ValueError on unparsable input."""
    tree = ast.parse(source, filename=path)
    return _Visitor(path, source).run(tree)


def read_source(path: Path) -> str:
    data = path.read_bytes()
    import io
    import tokenize

    return tokenize.TextIOWrapper(io.BytesIO(data)).read() if data else ""


def run_census(
    paths: Iterable[str | os.PathLike], prefilter: bool = True
) -> tuple[list[Site], list[ParseError]]:
    sites: list[Site] = []
    errors: list[ParseError] = []
    for f in iter_py_files(paths):
        try:
            data = f.read_bytes()
        except OSError as e:
            errors.append(ParseError(str(f), f"unreadable: {e}"))
            continue
        if prefilter and not any(m in data.lower() for m in PREFILTER):
            continue
        try:
            source = read_source(f)
            sites.extend(census_source(source, str(f)))
        except (SyntaxError, ValueError, UnicodeDecodeError, LookupError) as e:
            errors.append(ParseError(str(f), f"{type(e).__name__}: {e}"))
    return sites, errors


def census(paths: Iterable[str | os.PathLike]) -> list[Site]:
    """Sites in files/folders ``paths``; files that do not parse are skipped
    (use :func:`run_census` to get them)."""
    return run_census(paths)[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--json", action="store_true", help="JSON list of sites")
    ap.add_argument("--summary", action="store_true", help="counts per kind at the end")
    args = ap.parse_args(argv)
    sites, errors = run_census(args.paths)
    if args.json:
        print(json.dumps([asdict(s) for s in sites], indent=1))
    else:
        for s in sites:
            print(s.format())
        if args.summary:
            counts = Counter(s.kind for s in sites)
            print(f"# {len(sites)} sites in {len({s.path for s in sites})} files")
            for k, n in counts.most_common():
                print(f"#   {k:15} {n}")
    for e in errors:
        print(f"{e.path}: error: {e.message}", file=sys.stderr)
    return 2 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
