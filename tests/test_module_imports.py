"""Per-file processing dispatches to the notebook handler; the handler and the job
types never import it back (the floors as a whole: tests/test_architecture.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import codemod

PACKAGE = Path(codemod.__file__).parent


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
