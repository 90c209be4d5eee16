"""Tables keyed by device type: ``{"cuda": torch.cuda.empty_cache, "xpu":
torch.xpu.empty_cache}[dev.type]()``.

Such a table is portable as it stands: the function under "cuda" is looked up, and
called, only for the CUDA device, and every other device finds its own entry (or
none, as the program already has it). Its CUDA entry is no site; an entry that is
evaluated when the table is built (``"cuda": torch.cuda.memory_allocated()``) is.
"""

from __future__ import annotations

from typing import List

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
