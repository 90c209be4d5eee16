"""The catalogue: every CUDA-specific name and form torchport knows, as data.

One row per site kind: the qualified name(s) it is written as, the rule that reports
or rewrites it, the pass that owns it, the portable form it becomes (a template with
``{torch}`` and ``{device}``), what that form is on a machine without an accelerator,
and the words a file must contain to hold it (the byte prefilter's and each pass's
trigger). The fix kind and the torch release the fix needs are the rule's
(``codemod.rules``), looked up by code.

Everything else is derived from here: each pass's trigger and tables, the names one
pass leaves to another, the CUDA-only libraries a guard protects, the byte prefilter,
the README's rule tables and ``docs/rules.md``. Adding a ``torch.cuda.X ->
torch.accelerator.X`` mapping is one row here plus one fixture pair.

No libcst here: the byte prefilter reads the triggers at start-up.
"""

from __future__ import annotations

import re
from typing import Dict, Iterator, Optional, Tuple

from codemod.catalog import (
    amp,
    backend_flags,
    cuda_only,
    device_strings,
    distributed,
    queries,
    runtime,
    tensor_methods,
    tensor_types,
)
from codemod.catalog.cuda_only import (
    CUDA_ONLY,
    CUDA_ONLY_LIBRARIES,
    PORTED,
)  # noqa: F401
from codemod.catalog.rows import Param, Row  # noqa: F401
from codemod.catalog.runtime import PARAMS, UNKNOWN_ADVICE  # noqa: F401
from codemod.catalog.tensor_types import TENSOR_TYPES  # noqa: F401

# The passes, in the order they run (codemod.passes.PASSES follows it).
PASS_ORDER = (
    "device_strings",
    "tensor_methods",
    "amp",
    "cuda_queries",
    "cuda_runtime",
    "tensor_types",
    "distributed",
    "backend_flags",
    "cuda_only",
)


ROWS: Tuple[Row, ...] = tuple(
    runtime.ROWS
    + tensor_types.ROWS
    + device_strings.ROWS
    + tensor_methods.ROWS
    + amp.ROWS
    + queries.ROWS
    + distributed.ROWS
    + backend_flags.ROWS
    + cuda_only.ROWS
)


# -- views for the passes -----------------------------------------------------------
def rows_of(owner: str) -> Iterator[Row]:
    return (r for r in ROWS if r.owner == owner)


def names_of(owner: str, kinds=("name",)) -> Dict[str, Row]:
    """Qualified name (and every alias) -> row, for the rows ``owner`` handles."""
    return {n: r for r in rows_of(owner) if r.kind in kinds for n in r.names}


def codes_of(owner: str, kinds=("name", "module")) -> Dict[str, str]:
    """Qualified name -> rule code, for ``owner``'s names and modules."""
    return {n: r.code for n, r in names_of(owner, kinds).items()}


def trigger_of(owner: str) -> "re.Pattern[str]":
    """What a line (or file) must match to hold one of ``owner``'s sites."""
    words = dict.fromkeys(r.trigger for r in rows_of(owner))
    return re.compile("|".join(words))


def triggers() -> Tuple[str, ...]:
    """Every pass's trigger, once each, in catalogue order: the words a file must
    contain to hold any site (``codemod.run.prefilter`` searches bytes for them)."""
    return tuple(dict.fromkeys(r.trigger for r in ROWS))


def torch_cuda_elsewhere() -> Tuple[str, ...]:
    """``torch.cuda`` names and modules another pass than the runtime pass owns."""
    return tuple(
        sorted(
            n
            for r in ROWS
            if r.owner != "cuda_runtime" and r.kind in ("name", "module")
            for n in r.names
            if n.startswith("torch.cuda.")
        )
    )


def under(name: Optional[str], prefixes) -> Optional[str]:
    """The entry of ``prefixes`` that ``name`` is, or is below (at a dot)."""
    if not name:
        return None
    for prefix in prefixes:
        if name == prefix or name.startswith(prefix + "."):
            return prefix
    return None
