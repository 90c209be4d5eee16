"""Which rules are enabled, resolved as Ruff resolves ``select``, ``extend-select``
and ``ignore``: in layers (the default, then the configuration file, then the
command line), each either starting afresh (it has a ``select``) or adjusting the
rules the layers before it left.

Within a layer the more specific selector wins (``ALL`` < ``TP`` < ``TP2`` <
``TP20`` < ``TP201``), and at equal specificity ``ignore`` does; so
``--select ALL --ignore TP`` enables nothing, ``--ignore TP203`` on the command
line adds to the file's ``ignore``, and ``--select TP2`` on the command line
replaces the file's selection (its ``ignore`` included). A layer whose ``select``
is empty and that only ignores carries its ignores into the next one, as in Ruff.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Set

from codemod.model.rule import Selection

DEFAULT_SELECT = ("TP",)


@dataclass(frozen=True)
class Layer:
    select: Optional[List[str]] = None  # None: this layer keeps what came before
    extend_select: List[str] = field(default_factory=list)
    ignore: List[str] = field(default_factory=list)


def specificity(selector: str) -> int:
    """0 for ``ALL``, else the number of characters after the first one
    (``TP`` 1, ``TP2`` 2, ``TP201`` 4)."""
    selector = selector.upper()
    return 0 if selector == "ALL" else len(selector) - 1


def _matching(selector: str, codes: Sequence[str]) -> List[str]:
    selector = selector.upper()
    return [c for c in codes if selector == "ALL" or c.startswith(selector)]


def enabled_codes(layers: Iterable[Layer], codes: Sequence[str]) -> Set[str]:
    """The codes of ``codes`` the ``layers``, applied in order, leave enabled."""
    enabled: Set[str] = set()
    carried: List[str] = []
    for layer in layers:
        updates: Dict[str, bool] = {}
        ignores = [*layer.ignore, *carried]
        carried = []
        selects = [*(layer.select or []), *layer.extend_select]
        for level in range(6):
            for selector in selects:
                if specificity(selector) == level:
                    updates.update((c, True) for c in _matching(selector, codes))
            for selector in ignores:
                if specificity(selector) == level:
                    updates.update((c, False) for c in _matching(selector, codes))
        if layer.select is not None:
            enabled = {code for code, on in updates.items() if on}
            if not layer.select and not layer.extend_select and layer.ignore:
                carried = list(layer.ignore)
        else:
            for code, on in updates.items():
                (enabled.add if on else enabled.discard)(code)
    return enabled


def selection(layers: Iterable[Layer]) -> Selection:
    """The ``Selection`` of the codes the layers enable (every rule's code
    listed; nothing ignored)."""
    from codemod.rules import all_rules

    codes = sorted(all_rules())
    return Selection(
        sorted(enabled_codes([Layer(list(DEFAULT_SELECT)), *layers], codes))
    )
