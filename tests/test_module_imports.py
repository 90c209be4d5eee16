"""Per-file processing dispatches to the notebook handler; the handler and the job
types never import it back. The floors above ``rewrite`` import only their own
floor or lower ones, without a circle, counting imports inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

import codemod

PACKAGE = Path(codemod.__file__).parent
FLOORS = ("model", "rules", "catalog", "passes", "rewrite", "run", "config")
FLOORS += ("output", "cli")
UPPER_FLOORS = ("run", "config", "output", "cli")


def imported_modules(module: str):
    """Every codemod module ``module`` imports, at the top or inside a function."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.startswith("codemod.")}


def test_notebook_does_not_import_the_processing():
    imported = imported_modules("run/notebook")
    assert "codemod.run.process" not in imported
    assert "codemod.run.pool" not in imported


def test_job_types_import_neither_processing_nor_notebook():
    assert imported_modules("run/job") <= {
        "codemod.model.diagnostic",
        "codemod.model.diagnostic.Diagnostic",
    }


def test_modes_are_an_enum_that_reads_as_its_value():
    from codemod.run.job import Mode

    assert [m.value for m in Mode] == ["write", "check", "diff"]
    assert Mode.WRITE == "write"


def _upper_modules():
    for floor in UPPER_FLOORS:
        for path in sorted((PACKAGE / floor).glob("*.py")):
            yield f"{floor}/{path.stem}"


def test_upper_floors_import_no_higher_floor():
    for module in _upper_modules():
        floor = module.split("/")[0]
        for name in imported_modules(module):
            other = name.split(".")[1]
            if other in FLOORS:
                assert FLOORS.index(other) <= FLOORS.index(floor), (module, name)


def test_upper_floors_import_no_circle():
    modules = set(_upper_modules())
    imports = {}
    for module in modules:
        named = {
            n.replace("codemod.", "", 1).replace(".", "/")
            for n in imported_modules(module)
        }
        imports[module] = {n for n in named if n in modules and n != module}
    finished = set()

    def visit(module, path):
        assert module not in path, " -> ".join([*path, module])
        if module in finished:
            return
        for other in sorted(imports[module]):
            visit(other, [*path, module])
        finished.add(module)

    for module in sorted(modules):
        visit(module, [])
