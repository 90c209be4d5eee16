"""What a rewrite depends on, resolved from flags and configuration.

Kept free of libcst so that the command line starts fast when no file needs parsing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple

from codemod.model.rule import Selection, TorchVersion

# The release TorchTPU pins; see README "Target torch".
DEFAULT_TARGET_TORCH: TorchVersion = (2, 10)


@dataclass(frozen=True)
class Options:
    """What a rewrite depends on, resolved from flags and configuration."""

    target_torch: TorchVersion = DEFAULT_TARGET_TORCH
    # A leading underscore keeps the accessor out of `from module import *`.
    device_name: str = "_DEVICE"
    unsafe_fixes: bool = False
    selection: Selection = field(default_factory=Selection)
    device_import: Optional[str] = None  # e.g. "from myproj.runtime import DEVICE"
    # The imported name is a function that returns the device (an accessor, asked
    # for it on first use): code reads it as ``_DEVICE()``.
    device_import_call: bool = False
    # The project's line length ([tool.black]), also for what torchport lays out
    # itself when black does not run (the device binding).
    line_length: int = 88
    # (torch.cuda name, "test.py:12", how): a test in another file patches the name
    # through this module's view of torch.cuda (`mock.patch("pkg.m.torch.cuda.X")`,
    # how "view"), or patches torch.cuda's own and imports this module ("import").
    patched_elsewhere: Tuple[Tuple[str, str, str], ...] = ()
    # (class, "self.a.weight = self.b.weight", method, "model.py:12"): a class of
    # the run whose modules share a parameter, which a move on some backends unties.
    tied_classes: Tuple[Tuple[str, str, str, str], ...] = ()
    # (".helpers", names or None): what each `from .helpers import *` of this module
    # brings, read from the file of the run it names (None: not known there).
    star_exports: Tuple[Tuple[str, Optional[Tuple[str, ...]]], ...] = ()
