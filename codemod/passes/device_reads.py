"""Where a fix that reads the device is applied as it is, made unsafe, or not made.

- Where torch is not bound when the line runs (the module imports it only under a
  condition, ``if is_torch_available():``, or only inside functions), reading the
  device would raise where the original ran without torch: no fix, reported
  (``codemod.rewrite.device.optional`` finds the lines torch is bound on). Under a
  condition, a site that reads torch itself (``torch.ones(2).cuda()``) needed
  torch already, and the device is bound wherever torch is: it is fixed.
- Where reading it would ask for the accelerator earlier than the original asked
  for CUDA (``codemod.rewrite.device.timing``): the fix is unsafe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Tuple

import libcst as cst

from codemod.model.rule import Fix

EARLY_READ = (
    "; the fix would ask for the accelerator here, where the original did not ask"
    " for CUDA (at import time, or before a fork or a CUDA_VISIBLE_DEVICES write)"
)


@dataclass
class TorchBound:
    """The lines where torch is bound when they run (first, last), and why the
    others are not."""

    spans: List[Tuple[int, int]] = field(default_factory=list)
    why: str = ""
    # The binding is the module's, made where torch is imported: a site that reads
    # torch itself runs only where the binding is there too.
    module_binding: bool = False

    def holds(self, line: int) -> bool:
        return any(first <= line <= last for first, last in self.spans)


def device_read_fix(
    context, line: int, fix: Fix, message: str, node: cst.CSTNode, col: int = 0
) -> Tuple[Fix, str]:
    """The fix kind and message of a site ``node`` at ``line`` (1-based column
    ``col``) whose fix reads the device (``context``: the file's ``FileContext``).
    A read in a lambda's body runs when the lambda is called, not with the line."""
    if fix is Fix.NONE:
        return fix, message
    bound = context.torch_bound
    if bound is not None and not bound.holds(line):
        if not (bound.module_binding and _reads(node, context.torch_name)):
            return Fix.NONE, message + bound.why
    early = line in context.early_reads
    lazy = any(a <= (line, col) < b for a, b in context.lazy_regions)
    if fix is Fix.SAFE and early and not lazy:
        return Fix.UNSAFE, message + EARLY_READ
    return fix, message


def _reads(node: cst.CSTNode, name: str) -> bool:
    """Whether ``name`` is read in ``node`` (``torch`` in ``torch.ones(2).cuda()``)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name) and current.value == name:
            return True
        stack.extend(current.children)
    return False
