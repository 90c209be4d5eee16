"""Availability flags that stay CUDA's: ``cuda = torch.cuda.is_available()`` whose
later test picks CUDA-only code.

``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``: widened to every
accelerator, the flag would pick CUDA's tensor type on MPS, XPU or a TPU, which fails
there; kept, the program runs on the CPU wherever CUDA is missing, as it did. The
flag's ``torch.cuda.is_available()`` is then reported with the line of the use, not
fixed; the rest of what the flag guards is ported as usual (it runs on CUDA only).

The value is followed to its tests: a name bound from a flag is one too
(``multi = n_gpus > 1``, ``ids = list(range(n_gpus))``), and a test reads a flag
wherever the flag is in it (``if n_gpus > 1:``, ``if len(ids) > 1:``). So
``n_gpus = torch.cuda.device_count()`` that later decides ``nn.DataParallel(model)``
(CUDA's scatter) stays CUDA's, as ``if torch.cuda.device_count() > 1:`` does.

Read from the ``ast`` before the passes run: a flag is set in one statement and read
in another, often in another function, which a chunk of statements does not show.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from codemod import catalog
from codemod.catalog import CUDA_ONLY, PORTED, under
from codemod.passes.runtime.tables import CUDA_ONLY_MODULES
from codemod.passes.cuda_only_code import CUDA_NAMED, REPORTED
from codemod.passes.device_cases import LAUNCHER_DEVICES
from codemod.passes.names import ModuleFacts, ast_position, dotted_name

AVAILABILITY = frozenset({"torch.cuda.is_available", "torch.cuda.device_count"})
KEPT = (
    ": kept, as the flag it sets (`{flag}`) picks CUDA-only code on line {line},"
    " which a test of any accelerator would run on other devices; port that code,"
    " then widen the flag"
)
NAMED = (
    ": kept, as the flag it sets (`{flag}`) is what `{function}()`, named for CUDA, "
    "returns on line {line}: its callers ask for CUDA by name"
)
_ROWS = {n: r for r in catalog.ROWS if r.kind == "name" for n in r.names}


def kept_flags(
    tree: ast.Module, facts: ModuleFacts, lines: Sequence[str]
) -> Dict[Tuple[int, int], str]:
    """(line, 1-based column) of each availability call to keep -> why."""
    flags: Dict[str, List[ast.Call]] = {}
    tests: List[Tuple[ast.expr, Sequence[ast.AST]]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.IfExp)):
            guarded = node.body if isinstance(node, ast.If) else [node.body]
            tests.append((node.test, guarded))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            calls = [
                c for c in _calls(node.value) if facts.qualified_name(c) in AVAILABILITY
            ]
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                name = dotted_name(target)
                if calls and name:
                    flags.setdefault(name, []).extend(calls)
    kept: Dict[Tuple[int, int], str] = {}
    if not flags:
        return kept
    _follow(tree, flags)
    for function, flag, line in _returned_by_cuda_named(tree, flags):
        for call in flags[flag]:
            reason = NAMED.format(flag=flag, function=function, line=line)
            kept.setdefault(ast_position(call, lines), reason)
    for test, guarded in tests:
        for operand in _and_operands(test):
            for flag in _flags_read(operand, flags):
                if not _needs_cuda(guarded, facts):
                    continue
                reason = KEPT.format(flag=flag, line=test.lineno)
                for call in flags[flag]:
                    kept.setdefault(ast_position(call, lines), reason)
    return kept


def _returned_by_cuda_named(
    tree: ast.Module, flags: Dict[str, List[ast.Call]]
) -> Iterator[Tuple[str, str, int]]:
    """(function, flag, line) of each flag a function named for CUDA returns
    (``def is_cuda_available(): ... available = torch.cuda.is_available() ...
    return available``): its callers ask for CUDA by name."""
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if not CUDA_NAMED.search(function.name):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Return) and node.value is not None:
                for flag in _flags_read(node.value, flags):
                    yield function.name, flag, node.lineno


def _names_read(node: ast.AST) -> Iterator[str]:
    """The names and attributes of names (``self.n``) ``node`` reads."""
    for part in ast.walk(node):
        if isinstance(part, (ast.Name, ast.Attribute)):
            name = dotted_name(part)
            if name:
                yield name


def _flags_read(operand: ast.expr, flags: Dict[str, List[ast.Call]]) -> List[str]:
    return sorted({n for n in _names_read(operand) if n in flags})


def _follow(tree: ast.Module, flags: Dict[str, List[ast.Call]]) -> None:
    """Add to ``flags`` each name bound from one (``multi = n_gpus > 1``), with the
    calls of the flag it reads, until no binding adds one."""
    bindings = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [n for n in map(dotted_name, targets) if n]
            if names:
                bindings.append((names, node.value))
    grown = True
    while grown:
        grown = False
        for names, value in bindings:
            calls = [c for f in _flags_read(value, flags) for c in flags[f]]
            for name in names:
                new = [c for c in calls if c not in flags.get(name, [])]
                if new:
                    flags.setdefault(name, []).extend(new)
                    grown = True


def _calls(node: ast.AST) -> Iterator[ast.Call]:
    return (n for n in ast.walk(node) if isinstance(n, ast.Call))


def _and_operands(test: ast.expr) -> List[ast.expr]:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [o for v in test.values for o in _and_operands(v)]
    return [test]


def _needs_cuda(guarded: Sequence[ast.AST], facts: ModuleFacts) -> bool:
    """Whether the guarded code names something only CUDA has: a CUDA-only library
    or module, a name the CUDA-only pass reports, ``nn.DataParallel``, a launcher's
    "gpu", a ``torch.cuda`` name no pass
    ports (or a CUDA tensor type used as a value, which only calls of it are)."""
    called = set()
    for part in guarded:
        for node in ast.walk(part):
            if isinstance(node, ast.Constant) and node.value in LAUNCHER_DEVICES:
                return True  # accelerator="gpu": CUDA's device, to a launcher
            if isinstance(node, ast.Call):
                called.add(id(node.func))
            elif isinstance(node, (ast.Attribute, ast.Name)):
                if _cuda_only(facts.qualified_name(node), id(node) in called):
                    return True
    return False


def _cuda_only(name: Optional[str], is_called: bool) -> bool:
    if not name or under(name, PORTED):
        return False
    if (
        under(name, CUDA_ONLY)
        or under(name, REPORTED)
        or under(name, CUDA_ONLY_MODULES)
    ):
        return True
    if not name.startswith("torch.cuda."):
        return False
    row = _ROWS.get(name)
    if row is None:
        return name.count(".") == 2 and is_called  # an unknown torch.cuda function
    if row.rewrite == "tensor":
        return not is_called
    return row.portable is None and row.rewrite in ("report", "call") and is_called
