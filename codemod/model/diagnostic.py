"""A site torchport found: where it is, which rule, and what was done with it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Tuple


@dataclass(frozen=True)
class Diagnostic:
    path: str
    line: int
    col: int  # 1-based, like Ruff and flake8
    code: str
    name: str
    message: str
    fix: str  # "safe" | "unsafe" | "none": the fix kind of the rule
    applied: bool = (
        False  # True when torchport rewrote (or, not writing, would) the site
    )
    cell: Optional[int] = None  # notebooks: 1-based cell number; line is in the cell
    end_col: Optional[int] = None  # 1-based column just past the site's last character
    span_lines: int = 0  # end line minus line (kept when the line moves)
    # "error": the site can break off CUDA (it fails --check); "info": it runs
    # everywhere as it stands. The rule's severity, carried with the site.
    severity: str = "error"
    unsafe_available: bool = False  # not applied; --unsafe-fixes would apply it
    # Not applied because the target torch is older than the release its fix
    # needs, which this is.
    needs_torch: Optional[Tuple[int, int]] = None

    def at(self, path: str) -> "Diagnostic":
        return replace(self, path=path)

    @property
    def end_line(self) -> int:
        return self.line + self.span_lines

    @property
    def where(self) -> str:
        """``path``, or ``path:cell N`` in a notebook."""
        return self.path if self.cell is None else f"{self.path}:cell {self.cell}"


def fails(diagnostic: Diagnostic, strict: bool = False) -> bool:
    """A site left as it is that makes --check (and the hook) fail."""
    return not diagnostic.applied and (strict or diagnostic.severity != "info")
