"""The backend evidence table (codemod/backends.py) holds against the installed torch.

Every row for a backend built into PyTorch (CUDA, CPU, MPS, XPU) names a file of the
installed torch: a ``yes`` must find its symbol there, a ``no`` must not. TorchTPU rows
are checked the same way against the installed ``torch_tpu`` when there is one (see
scripts/torchtpu_check.py), and skipped otherwise.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from functools import lru_cache
from pathlib import Path

import pytest

from codemod.catalog.backends import (
    ACCELERATOR_CONTRACT,
    BACKENDS,
    TORCH_CONTRACT,
    IDIOMS,
    NO,
    UNKNOWN,
    YES,
    _callee,
    render_table,
    shown_by_presence,
)
from tests.fixture_cases import FIXTURES

IN_TORCH = ("cuda", "cpu", "mps", "xpu")
DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def _site_packages(package: str):
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).parent


@lru_cache(maxsize=None)
def _definitions(path: Path) -> frozenset:
    """Names a Python file defines or imports at module level, and class members."""
    names = set()

    def walk(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(prefix + node.name)
                if isinstance(node, ast.ClassDef):
                    walk(node.body, prefix + node.name + ".")
            elif isinstance(node, ast.Assign):
                names.update(
                    prefix + t.id for t in node.targets if isinstance(t, ast.Name)
                )
            elif isinstance(node, ast.ImportFrom):
                names.update(prefix + (a.asname or a.name) for a in node.names)
            elif isinstance(node, (ast.If, ast.Try)):
                walk(node.body, prefix)

    walk(ast.parse(path.read_text(encoding="utf-8")).body, "")
    return frozenset(names)


def has_symbol(root: Path, relative: str, symbol: str) -> bool:
    path = root / relative
    assert path.is_file(), f"{relative} is not in {root}"
    if path.suffix == ".py" and DOTTED.match(symbol):
        return symbol in _definitions(path)
    return symbol in path.read_text(encoding="utf-8", errors="replace")


def _rows(backends):
    return [
        pytest.param(idiom, backend, id=f"{backend}:{idiom}")
        for idiom, row in IDIOMS.items()
        for backend in backends
        if row[backend].status != UNKNOWN
    ]


@pytest.mark.parametrize("idiom, backend", _rows(IN_TORCH))
def test_in_torch_evidence_holds(idiom, backend):
    evidence = IDIOMS[idiom][backend]
    found = has_symbol(_site_packages("torch"), evidence.path, evidence.symbol)
    assert found == shown_by_presence(evidence), evidence


@pytest.mark.parametrize("idiom, backend", _rows(["tpu"]))
def test_torchtpu_evidence_holds(idiom, backend):
    root = _site_packages("torch_tpu")
    if root is None:
        pytest.skip(
            "torch_tpu is not installed (scripts/torchtpu_check.py installs it)"
        )
    evidence = IDIOMS[idiom][backend]
    found = has_symbol(root, evidence.path, evidence.symbol)
    assert found == shown_by_presence(evidence), evidence


def test_every_row_covers_every_backend():
    for idiom, row in IDIOMS.items():
        assert tuple(row) == BACKENDS, idiom
        for backend, evidence in row.items():
            assert evidence.status in (YES, NO, UNKNOWN), (idiom, backend)
            if evidence.status != UNKNOWN:
                assert evidence.path and evidence.symbol, (idiom, backend)
            else:
                assert evidence.note, (idiom, backend)


def test_autocast_rows_match_torch():
    import torch

    for backend in IN_TORCH:
        claimed = IDIOMS["torch.autocast(_DEVICE().type)"][backend].status == YES
        assert torch.amp.is_autocast_available(backend) == claimed, backend


def test_table_has_a_line_per_idiom():
    table = render_table().splitlines()
    assert len(table) == 2 + len(IDIOMS)
    assert table[0].startswith("| idiom | CUDA | CPU | MPS | XPU | TorchTPU")


def _emitted_idioms():
    """Each device-module member and torch.accelerator function the fixtures' after
    files call, with one file that calls it."""
    found = {}
    for path in sorted(FIXTURES.rglob("*.after.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Attribute):
                continue
            owner = node.value
            if (
                isinstance(owner, ast.Call)
                and isinstance(owner.func, ast.Attribute)
                and owner.func.attr == "get_device_module"
            ):
                found.setdefault("." + node.attr, path)
            elif (
                isinstance(owner, ast.Attribute)
                and owner.attr == "accelerator"
                and isinstance(owner.value, ast.Name)
                and owner.value.id == "torch"
            ):
                found.setdefault("torch.accelerator." + node.attr, path)
    return found


def test_every_emitted_idiom_has_its_evidence():
    """A form torchport starts writing gets a row saying which backends have it;
    a torch.accelerator function of the contract every backend serves needs none."""
    rows = {_callee(idiom) for idiom in IDIOMS}
    contract = {f"torch.accelerator.{name}" for name in ACCELERATOR_CONTRACT}
    without = {
        idiom: str(path.relative_to(FIXTURES))
        for idiom, path in _emitted_idioms().items()
        if idiom not in rows and idiom not in contract
    }
    assert without == {}


def test_the_contract_is_torch_accelerator():
    import torch

    assert all(callable(getattr(torch.accelerator, n)) for n in ACCELERATOR_CONTRACT)
    assert all(isinstance(getattr(torch, n), type) for n in TORCH_CONTRACT)


def test_torch_streams_and_events_are_emitted_only_as_the_contract():
    """``torch.Stream``/``torch.Event`` are written (TP305, TP306) and are the
    contract; no device module's ``Stream`` or ``Event`` is written any more."""
    emitted = set(_emitted_idioms())
    assert not emitted & {".Stream", ".Event", ".current_stream", ".stream"}
    text = "".join(p.read_text() for p in sorted(FIXTURES.rglob("*.after.py")))
    assert all(f"torch.{name}(" in text for name in TORCH_CONTRACT)
