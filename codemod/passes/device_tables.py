"""Tables keyed by device type: ``{"cuda": torch.cuda.empty_cache, "xpu":
torch.xpu.empty_cache}[dev.type]()``.

Such a table runs as it stands: the function under "cuda" is looked up, and called,
only for the CUDA device. Its CUDA entry is no site for the runtime pass; an entry
that is evaluated when the table is built (``"cuda": torch.cuda.memory_allocated()``)
is. But an accelerator the table does not name finds no entry: a KeyError, or what
``.get()`` gives otherwise (``None``, then called: a TypeError), where CUDA found
its own. No entry can be written for a device not known until run time (a key
``_DEVICE().type`` is "cpu" on the CPU, and would clash with that entry), so the
table's "cuda" key is reported (``NO_ENTRY``, TP109).
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from codemod.passes.device_positions import OTHER_DEVICES

DEVICE_TYPES = OTHER_DEVICES | {"cpu", "meta"}


def _key(element: cst.BaseDictElement):
    if isinstance(element, cst.DictElement) and isinstance(
        element.key, cst.SimpleString
    ):
        return element.key.evaluated_value
    return None


def cuda_entries(table: cst.Dict) -> List[cst.BaseExpression]:
    """The values under "cuda" of a dict literal that has another device type's key
    too, where they are references (a name or an attribute), not calls."""
    keys = [_key(e) for e in table.elements]
    if "cuda" not in keys or not DEVICE_TYPES & set(keys):
        return []
    return [
        e.value  # type: ignore[attr-defined]
        for e, key in zip(table.elements, keys)
        if key == "cuda" and isinstance(e.value, (cst.Name, cst.Attribute))
    ]


NO_ENTRY = (
    '"cuda" keys a table of device types, which has no entry for another '
    "accelerator: there it finds none (a KeyError, or what `.get()` gives "
    "otherwise) where CUDA finds its own; add that device's entry by hand (what "
    "CUDA's does, in portable code)"
)


def keyed_by_devices(table: cst.Dict) -> Optional[cst.SimpleString]:
    """The "cuda" key of a dict literal whose every key is a device type's name
    (a key computed at run time, or ``**more``, may name any device: None) and
    whose "cuda" entry is code (a function, a call), not data: ``{"cuda": 0,
    "cpu": 1}`` counts devices; a device's own constant is no CUDA path."""
    keys = [_key(e) for e in table.elements]
    if "cuda" not in keys or not all(k in DEVICE_TYPES | {"cuda"} for k in keys):
        return None
    if len(set(keys)) < 2:
        return None  # {"cuda": ...} alone: a table of CUDA's, or not one of devices
    element = table.elements[keys.index("cuda")]
    if not isinstance(element.value, _CODE):
        return None
    return element.key  # type: ignore[attr-defined]


_CODE = (cst.Name, cst.Attribute, cst.Call, cst.Lambda)


class DeviceTables:
    """Mixin for the device-strings pass (its ``report``)."""

    def visit_Dict(self, node: cst.Dict) -> None:
        key = keyed_by_devices(node)
        if key is not None:
            self.report(key, "TP109", NO_ENTRY)  # type: ignore[attr-defined]
