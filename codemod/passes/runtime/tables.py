"""The catalogue as the runtime pass reads it: its rows by name (``API``) and by
method (``METHODS``), the names it leaves to other passes, and the kinds of object
the pass follows (an event, a stream, a device index)."""

from __future__ import annotations

import re
from typing import Dict

import libcst as cst

from codemod import catalog
from codemod.catalog import Row

OWNER = "cuda_runtime"  # the pass's rows in the catalogue are this owner's
# Qualified name (after ALIASES) -> its catalogue row (portable form, value on the
# CPU, the rewrite applied, advice when reported).
API: Dict[str, Row] = catalog.names_of(OWNER)
UNKNOWN = Row(
    ("torch.cuda.*",),
    "TP390",
    OWNER,
    rewrite="report",
    advice=catalog.UNKNOWN_ADVICE,
)
# Submodules whose functions torch.cuda re-exports.
ALIASES = re.compile(r"^torch\.cuda\.(?:memory|random|streams)\.")
# Reported by other passes (AMP, distributed, backend flags, report-only ones).
ELSEWHERE = catalog.torch_cuda_elsewhere()
# Names that keep guarded code CUDA-only (so its `is_available()` guard stays).
# nn.DataParallel scatters with CUDA only (TP506).
CUDA_ONLY_MODULES = catalog.CUDA_ONLY_LIBRARIES + (
    "torch.utils.cpp_extension",
    *(n for r in catalog.rows_of("distributed") if r.code == "TP506" for n in r.names),
)

# Methods of CUDA events and streams that torch.cpu's stand-ins lack, kept for
# accelerators, with their CPU value: the catalogue's method rows that have one
# (`Tensor.get_device` is a method row too, rewritten where it is a device argument).
METHODS: Dict[str, Row] = {
    row.name.rsplit(".", 1)[1]: row
    for row in catalog.rows_of(OWNER)
    if row.kind == "method" and row.cpu is not None
}
# `x.get_device()`, rewritten where it is passed as a device.
GET_DEVICE: Row = next(
    row for row in catalog.rows_of(OWNER) if row.name == "Tensor.get_device"
)

# The kinds of object the pass follows from their bindings (``bindings``).
EVENT, STREAM = "event", "stream"
INT = "int"  # a device index (`with torch.cuda.device(i):`, TP303)
# Which object each method belongs to (record_stream: what its argument is).
METHOD_KINDS = {
    name: STREAM if row.name.startswith(("Stream.", "Tensor.")) else EVENT
    for name, row in METHODS.items()
}


def canonical(name: str) -> str:
    """``torch.cuda.memory.empty_cache`` -> ``torch.cuda.empty_cache``."""
    return ALIASES.sub("torch.cuda.", name)


def is_name(node: cst.CSTNode, value: str) -> bool:
    return isinstance(node, cst.Name) and node.value == value
