"""What a worker is handed for each file (``Job``, in one of three ``Mode``s) and
what it hands back (``FileResult``).

Kept apart from ``process`` so that the file-kind handlers it dispatches to
(``notebook``) and the command line use these types without importing it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import List, Optional

from codemod.model.diagnostic import Diagnostic


class Mode(str, enum.Enum):
    """What a run does with a changed file (a ``str``, so it reads as its value)."""

    WRITE = "write"  # rewrite it in place
    CHECK = "check"  # write nothing; report
    DIFF = "diff"  # write nothing; print a unified diff


WRITE, CHECK, DIFF = Mode.WRITE, Mode.CHECK, Mode.DIFF


@dataclass
class FileResult:
    path: str
    changed: bool = False
    written: bool = False
    diagnostics: List[Diagnostic] = field(default_factory=list)
    error: Optional[str] = None
    diff: str = ""
    output: Optional[bytes] = None  # the rewritten bytes, for stdin mode
    adds_accessor: bool = False  # the rewrite gives the module an accessor of its own


@dataclass(frozen=True)
class Job:
    """What a worker needs to process one file (picklable)."""

    mode: Mode
    options: "object"
    format: bool = True
    per_file: "object" = None  # path -> Options (config.PerFileOptions), or None
    # file path -> what tests elsewhere patch in it (codemod.run.patch_targets)
    patched: "object" = None
    tied: tuple = ()  # the run's classes whose modules share a parameter (the same)
    star: "object" = None  # file path -> what its star imports bring (the same)
