"""The types of the catalogue: a row per CUDA-specific name or form, and the
parameters of a ``torch.cuda`` function as its portable form takes them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from codemod.model.rule import Rule, TorchVersion


@dataclass(frozen=True)
class Param:
    """A parameter of a ``torch.cuda`` function, as its portable form takes it.

    ``positional_only``: the portable form takes it by position only (a keyword is
    moved to its position). ``keyword_only``: by keyword only (a positional argument
    is given its name). ``index_only``: the portable form takes an int index and
    no ``torch.device`` or string, so only an int literal (or None) is exact.
    ``default_only``: the portable form does not honour it, so only ``False`` (its
    default) is exact.
    """

    name: str
    positional_only: bool = False
    index_only: bool = False
    keyword_only: bool = False
    default_only: bool = False


@dataclass(frozen=True)
class Row:
    """One CUDA-specific name (or form) and what torchport does with it.

    ``kind``: "name" (a qualified name, the first of ``names``; the others are
    aliases), "module" (the name and everything below it, at a dot), "method" (an
    attribute of any receiver), "keyword", "string" (a literal) or "form" (a shape
    of code, described in ``names``). ``portable``: the replacement template (None:
    reported only). ``cpu``: the value of the portable form on a machine without an
    accelerator when it would raise there ("None": a statement, skipped).
    ``rewrite``: the name of the rewrite the owning pass applies to it (the runtime
    pass's are registered in ``codemod.passes.runtime.shapes``). ``min_torch``: the
    release this row's portable form needs, where it is newer than its rule's. ``advice``: said with the report.
    ``params`` (from ``PARAMS``): how the portable form takes the call's arguments.
    """

    names: Tuple[str, ...]
    code: str
    owner: str
    portable: Optional[str] = None
    cpu: Optional[str] = None
    kind: str = "name"
    rewrite: str = "call"
    advice: str = ""
    trigger: str = "cuda"  # regex fragment a line holding it matches
    min_torch: Optional[TorchVersion] = None

    @property
    def name(self) -> str:
        return self.names[0]

    @property
    def rule(self) -> "Rule":
        """The rule's fix kind, minimum torch and documentation (``codemod.rules``),
        read when asked: the prefilter reads the catalogue at start-up, not the
        rules' documentation."""
        from codemod.rules import REGISTRY

        return REGISTRY[self.code]
