"""Branches of a torch-version test: ``if version.parse(torch.__version__) <
version.parse("2.4"):`` (or ``TORCH_VERSION < (2, 4)``, a name bound from
``torch.__version__``) holds code for older releases. There, the target is at most
the highest release the branch runs on (2.3 here): a fix needing a newer torch is
reported in it, whatever the run's target. The ``else`` of ``>=`` / ``>`` is such a
branch too. Lower bounds (``>= (2, 6)``) do not raise the target: the run's target
is what the user supports.

Read from the ``ast`` before the passes run: the test and the name it reads are in
statements a chunk need not hold.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import List, Optional, Set, Tuple

from codemod.model.options import Options
from codemod.model.versions import ACCELERATOR_TORCH

TorchVersion = Tuple[int, int]
# (first line, last line, highest torch release the lines run on, the test as written)
Bound = Tuple[int, int, TorchVersion, str]
_RELEASE = re.compile(r"(\d+)\.(\d+)")
# Added to the version note of a site in such a branch.
BRANCH = " in this branch, which runs where `{test}`"


def _mentions_torch_version(node: ast.AST, names: Set[str]) -> bool:
    for part in ast.walk(node):
        if isinstance(part, ast.Attribute) and part.attr == "__version__":
            if isinstance(part.value, ast.Name) and part.value.id == "torch":
                return True
        if isinstance(part, ast.Name) and part.id in names:
            return True
    return False


def _release(node: ast.AST) -> Optional[TorchVersion]:
    """``(2, 4)``, ``"2.4"``, ``"2.4.0"``, ``version.parse("2.4")``: (2, 4)."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        return _release(node.args[0])
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        match = _RELEASE.match(node.value)
        return (int(match[1]), int(match[2])) if match else None
    if isinstance(node, ast.Tuple) and len(node.elts) >= 2:
        parts = [e.value for e in node.elts[:2] if isinstance(e, ast.Constant)]
        if len(parts) == 2 and all(type(p) is int for p in parts):
            return (parts[0], parts[1])
    return None


def _before(release: TorchVersion) -> TorchVersion:
    major, minor = release
    return (major, minor - 1) if minor > 0 else (major - 1, 99)


def _highest(test: ast.expr, names: Set[str]) -> Tuple[Optional[TorchVersion], bool]:
    """The highest release ``test``'s body runs on (or, second item True, its
    ``else``), from a comparison of torch's version with a release."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None, False
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if _mentions_torch_version(right, names) and not _mentions_torch_version(
        left, names
    ):
        left, right = right, left
        op = {ast.Lt: ast.Gt(), ast.LtE: ast.GtE(), ast.Gt: ast.Lt(), ast.GtE: ast.LtE()}.get(type(op), op)  # type: ignore[assignment]
    if not _mentions_torch_version(left, names):
        return None, False
    release = _release(right)
    if release is None:
        return None, False
    if isinstance(op, ast.Lt):
        return _before(release), False
    if isinstance(op, ast.LtE):
        return release, False
    if isinstance(op, ast.GtE):
        return _before(release), True
    if isinstance(op, ast.Gt):
        return release, True
    return None, False


def _version_names(tree: ast.Module) -> Set[str]:
    """Names bound from torch's version anywhere (``TORCH_VERSION = ...``)."""
    names: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _mentions_torch_version(node.value, names):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def bounded_branches(tree: ast.Module) -> List[Bound]:
    names = _version_names(tree)
    bounds: List[Bound] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.If, ast.IfExp)):
            continue
        highest, in_else = _highest(node.test, names)
        if highest is None:
            continue
        branch = node.orelse if in_else else node.body
        parts = branch if isinstance(branch, list) else [branch]
        if parts:
            first, last = parts[0].lineno, parts[-1].end_lineno or parts[-1].lineno
            test = ast.unparse(node.test)
            bounds.append((first, last, highest, f"not ({test})" if in_else else test))
    return bounds


def highest_at(bounds: List[Bound], line: int) -> Optional[Tuple[TorchVersion, str]]:
    """The lowest bound of the branches holding ``line``, with its test."""
    held = [(b[2], b[3]) for b in bounds if b[0] <= line <= b[1]]
    return min(held) if held else None


def site_options(context, line: int, rule, min_torch):
    """The options a site of ``rule`` on ``line`` is decided with, what a version
    note adds, and the release its fix needs (``min_torch``, else the rule's). In a
    branch of a torch-version test the target is no newer than the releases it runs
    on (the note names that test), and a fix that reads the device needs
    torch.accelerator there too, where the binding asks it."""
    options: Options = context.options
    needs = min_torch or rule.min_torch
    bound = highest_at(context.version_bounds, line)
    if bound is None or bound[0] >= options.target_torch:
        return options, "", needs
    if rule.reads_device and options.target_torch >= ACCELERATOR_TORCH:
        needs = max(needs or ACCELERATOR_TORCH, ACCELERATOR_TORCH)
    bounded = replace(options, target_torch=bound[0])
    return bounded, BRANCH.format(test=bound[1]), needs
