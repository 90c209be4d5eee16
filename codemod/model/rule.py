"""What a rule is: its code, name, message, fix kind, the torch release its fix
needs, its documentation; and which codes a run selects."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterable, Optional, Tuple

TorchVersion = Tuple[int, int]


class Fix(enum.Enum):
    """How a rule's rewrite may be applied."""

    SAFE = "safe"  # applied by default
    UNSAFE = "unsafe"  # applied only with --unsafe-fixes
    NONE = "none"  # report only


@dataclass(frozen=True)
class Rule:
    code: str  # "TP101"
    name: str  # "cuda-device-string"
    message: str  # one line, shown with every diagnostic
    fix: Fix
    min_torch: Optional[TorchVersion]  # the release the rewrite needs
    what: str = ""  # documentation: what it does
    why: str = ""  # documentation: why it matters
    before: str = ""  # documentation: example input
    after: str = ""  # documentation: example output
    safety: str = ""  # documentation: why the fix is safe / unsafe / absent
    # Whole programs the rule must leave alone: no site of it, no change (executed by
    # tests/test_docs.py as the example is).
    valid: Tuple[str, ...] = ()
    # Whether the fix reads the device (``_DEVICE()``): where the original did not ask
    # for CUDA, such a fix asks for the accelerator earlier, and is then unsafe.
    reads_device: bool = True
    # "error": the site can break off CUDA, so it fails --check; "info": it runs
    # everywhere as it stands (shown and counted, fails only with --strict).
    severity: str = "error"


def parse_version(text: str) -> TorchVersion:
    """'2.7', '2.7.1' or '2.7.0+cpu' -> (2, 7); raises ValueError on anything else."""
    from packaging.version import InvalidVersion, Version

    try:
        release = Version(str(text).strip()).release
    except InvalidVersion:
        release = ()
    if len(release) < 2:
        raise ValueError(f"not a torch version: {text!r} (expected MAJOR.MINOR)")
    return release[0], release[1]


def format_version(version: TorchVersion) -> str:
    return f"{version[0]}.{version[1]}"


class Selection:
    """Which rule codes are enabled: Ruff-style code prefixes, longest match wins."""

    def __init__(self, select: Iterable[str] = ("TP",), ignore: Iterable[str] = ()):
        self.select = tuple(code.upper() for code in select)
        self.ignore = tuple(code.upper() for code in ignore)

    def enabled(self, code: str) -> bool:
        def longest(prefixes: Tuple[str, ...]) -> int:
            return max(
                (len(p) for p in prefixes if p == "ALL" or code.startswith(p)),
                default=-1,
            )

        chosen, dropped = longest(self.select), longest(self.ignore)
        return chosen >= 0 and chosen > dropped
