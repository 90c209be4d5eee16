"""Every name of torch's own device API with a ``torch.cuda`` counterpart is mapped by
the catalogue or explained in ``codemod/catalog/accelerator.py``.

Scanned in the installed torch: ``torch.accelerator``'s public functions and classes
(and those of its ``memory`` and ``graphs`` modules), the public methods of
``torch.Stream`` and ``torch.Event`` that ``torch.cuda.Stream``/``Event`` have too,
and the members common to every in-tree device module (``torch.cuda``, ``torch.cpu``,
``torch.mps``, ``torch.xpu``, ``torch.mtia``). A newer torch that adds one fails here
until a row maps it or an entry says why not.
"""

from __future__ import annotations

import types
from typing import Dict, Set, Tuple

import pytest
import torch

from codemod import catalog
from codemod.catalog.accelerator import COUNTERPARTS, NOT_MAPPED

DEVICE_MODULES = ("cuda", "cpu", "mps", "xpu", "mtia")


def _public(owner) -> Set[str]:
    return {n for n in dir(owner) if not n.startswith("_")}


def _accelerator_names() -> Dict[str, Tuple[str, ...]]:
    """torch.accelerator.<name> -> its torch.cuda counterparts."""
    found = {}
    for module in (
        torch.accelerator,
        torch.accelerator.memory,
        torch.accelerator.graphs,
    ):
        for name in _public(module):
            value = getattr(module, name)
            if isinstance(value, types.ModuleType) or not callable(value):
                continue
            if getattr(value, "__module__", "").split(".")[0] != "torch":
                continue  # typing and the like, imported there
            counterparts = COUNTERPARTS.get(name, (f"torch.cuda.{name}",))
            found[f"torch.accelerator.{name}"] = tuple(
                c for c in counterparts if _exists(c)
            )
    return found


def _exists(dotted: str) -> bool:
    owner = torch
    for part in dotted.split(".")[1:]:
        if not hasattr(owner, part):
            return False
        owner = getattr(owner, part)
    return True


def _method_names() -> Dict[str, Tuple[str, ...]]:
    found = {}
    for cls in ("Stream", "Event"):
        for name in _public(getattr(torch, cls)):
            if callable(getattr(getattr(torch, cls), name)):
                counterpart = getattr(torch.cuda, cls)
                if hasattr(counterpart, name):
                    found[f"torch.{cls}.{name}"] = (f"{cls}.{name}",)
    return found


def _device_module_names() -> Dict[str, Tuple[str, ...]]:
    common = set.intersection(*(_public(getattr(torch, m)) for m in DEVICE_MODULES))
    return {
        f"torch.get_device_module(_DEVICE()).{name}": (f"torch.cuda.{name}",)
        for name in sorted(common)
        if not isinstance(getattr(torch.cuda, name), types.ModuleType)
    }


SCANNED = {
    **_accelerator_names(),
    **{f"torch.{c}": (f"torch.cuda.{c}",) for c in ("Stream", "Event")},
    **_method_names(),
    **_device_module_names(),
}


def _maps(name: str, counterpart: str) -> bool:
    """A row rewrites ``counterpart`` (a torch.cuda name, or a method) to a form of
    torch's own device API."""
    row = next((r for r in catalog.ROWS if counterpart in r.names), None)
    if row is None or row.rewrite == "report":
        return False
    if counterpart.startswith(("Stream.", "Event.")):
        return True  # a method row: kept for accelerators, on the object written
    portable = row.portable or ""
    own = name.rsplit(".", 1)[1]
    if name.startswith("torch.get_device_module"):
        return bool(portable)  # any portable form of the member will do
    return f"accelerator.{own}" in portable or portable == f"{{torch}}.{own}"


def _verdict(name: str) -> str:
    counterparts = SCANNED[name]
    if name in NOT_MAPPED:
        return "explained"
    if counterparts and all(_maps(name, c) for c in counterparts):
        return "mapped"
    if not counterparts:
        return "no counterpart"
    return "neither"


def test_the_scan_finds_the_device_api():
    assert {
        "torch.accelerator.synchronize",
        "torch.accelerator.get_memory_info",
        "torch.Stream.wait_stream",
        "torch.Event.elapsed_time",
        "torch.get_device_module(_DEVICE()).synchronize",
    } <= set(SCANNED)


@pytest.mark.parametrize("name", sorted(SCANNED))
def test_every_name_is_mapped_or_explained(name):
    assert _verdict(name) != "neither", (
        f"{name} has a torch.cuda counterpart {SCANNED[name]} that no catalogue row "
        "rewrites to it: add a row, or say why not in codemod/catalog/accelerator.py"
    )


def test_every_explanation_is_of_a_real_name():
    scanned = set(SCANNED) | {"torch.accelerator.get_memory_info[1]"}
    assert set(NOT_MAPPED) <= scanned, set(NOT_MAPPED) - scanned


def test_an_explained_name_is_not_mapped_as_well():
    both = [
        n
        for n in NOT_MAPPED
        if n in SCANNED and SCANNED[n] and all(_maps(n, c) for c in SCANNED[n])
    ]
    assert both == []


def test_a_new_name_with_a_reported_counterpart_fails(monkeypatch):
    # As a newer torch adding torch.accelerator.memory_summary would.
    new = "torch.accelerator.memory_summary"
    monkeypatch.setitem(SCANNED, new, ("torch.cuda.memory_summary",))
    assert _verdict(new) == "neither"
