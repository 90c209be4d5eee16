"""The package's shape: floors that import only downward, passes that do not import
each other, no import cycle (function-local imports count), small modules.

Floors, lowest first (a module may import its own floor and the floors below):
model → rules → catalog → passes → rewrite → run → config → output → cli.
``codemod/simulate`` stands alone: it imports nothing else of torchport, and only
the command line imports it.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

import codemod
from codemod.passes import PASSES

PACKAGE = Path(codemod.__file__).resolve().parent
FLOORS = (
    "model",
    "rules",
    "catalog",
    "passes",
    "rewrite",
    "run",
    "config",
    "output",
    "cli",
)
STANDALONE = {"simulate"}  # imports no other floor; imported by the top floor only
MAX_LINES = 400
# Modules that are data only, allowed to be longer (none today).
LONG_DATA_MODULES: Dict[str, str] = {}


def modules(root: Path) -> Dict[str, Path]:
    """Dotted module name -> file, for every module of the package under ``root``."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports_of(path: Path, module: str, known: Set[str]) -> Iterator[Tuple[int, str]]:
    """(line, module) for every import of a package module in ``path`` (the module
    ``module``), wherever it is: at the top, inside a function, under ``if
    TYPE_CHECKING``; relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = PACKAGE.name
    here = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == package:
                    yield node.lineno, _known_prefix(alias.name, known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = here.split(".")
                parent = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            if base.split(".")[0] != package:
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                target = full if full in known else base
                yield node.lineno, _known_prefix(target, known)


def _known_prefix(name: str, known: Set[str]) -> str:
    while name not in known and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def floor_of(module: str) -> Tuple[str, int]:
    """The floor a module is on, and its height (-1: the package's own face)."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] not in FLOORS and parts[1] not in STANDALONE:
        # codemod itself (__version__), __main__
        return parts[-1], -1 if len(parts) == 1 else len(FLOORS)
    if parts[1] in STANDALONE:
        return parts[1], len(FLOORS) - 1  # below the command line only
    return parts[1], FLOORS.index(parts[1])


def pass_of(module: str) -> str:
    """The pass a module of codemod.passes belongs to: the module (or the package
    under codemod.passes) that defines one of the passes; "" for the modules every
    pass shares."""
    parts = module.split(".")
    if len(parts) < 3 or parts[1] != "passes":
        return ""
    return parts[2] if parts[2] in PASS_HOMES else ""


# codemod.passes.X for each X that holds a pass (a module, or a package of modules).
PASS_HOMES = {cls.__module__.split(".")[2] for cls in PASSES}


def graph(root: Path) -> Dict[str, List[Tuple[int, str]]]:
    mods = modules(root)
    known = set(mods)
    return {name: list(imports_of(path, name, known)) for name, path in mods.items()}


def problems(root: Path) -> List[str]:
    """Every rule of the architecture the package under ``root`` breaks."""
    edges = graph(root)
    found = []
    for module, targets in edges.items():
        floor, height = floor_of(module)
        for line, target in targets:
            if target == module:
                continue
            target_floor, target_height = floor_of(target)
            if floor in STANDALONE and target_floor != floor and target_height >= 0:
                found.append(f"{module}:{line}: {floor} imports {target}")
            elif target_floor in STANDALONE and floor not in ("cli", target_floor):
                found.append(f"{module}:{line}: only the cli imports {target}")
            elif target_height > height:
                found.append(
                    f"{module}:{line}: {floor} imports {target}, a higher floor"
                )
            mine, theirs = pass_of(module), pass_of(target)
            if mine and theirs and mine != theirs:
                found.append(f"{module}:{line}: pass {mine} imports pass {theirs}")
    found += [f"import cycle: {' -> '.join(c)}" for c in cycles(edges)]
    return found


def cycles(edges: Dict[str, List[Tuple[int, str]]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for _, target in edges.get(node, ()):
            if target == node or target not in edges:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_floors_passes_and_cycles():
    assert problems(PACKAGE) == []


def test_no_module_is_over_the_size_limit():
    long = {
        name: n
        for name, path in modules(PACKAGE).items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
        and name not in LONG_DATA_MODULES
    }
    assert long == {}


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / PACKAGE.name
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    return copy


def _plant(copy: Path, module: str, line: str, inside_function: bool) -> None:
    path = copy / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = copy / module.replace(".", "/") / "__init__.py"
    text = path.read_text(encoding="utf-8")
    if inside_function:
        line = f"def _planted():\n    {line}\n"
    path.write_text(text + "\n" + line + "\n", encoding="utf-8")


@pytest.mark.parametrize("inside_function", [False, True], ids=["top", "local"])
def test_a_planted_back_edge_is_found(tmp_path, inside_function):
    copy = _copy(tmp_path)
    _plant(copy, "model.rule", "from codemod.cli import main", inside_function)
    found = problems(copy)
    assert any("model imports codemod.cli, a higher floor" in p for p in found)
    assert any(p.startswith("import cycle:") and "codemod.cli" in p for p in found)


def test_a_planted_pass_to_pass_import_is_found(tmp_path):
    copy = _copy(tmp_path)
    _plant(copy, "passes.amp", "import codemod.passes.distributed", True)
    assert any("pass amp imports pass distributed" in p for p in problems(copy))


def test_the_checker_sees_every_floor():
    seen = {floor_of(name)[0] for name in modules(PACKAGE)}
    assert set(FLOORS) <= seen
