"""``torch.cuda`` functions a test patches: ``mock.patch("torch.cuda.is_available",
return_value=False)``, ``mock.patch.object(torch.cuda, "device_count", ...)``,
``monkeypatch.setattr(torch.cuda, "is_available", ...)`` or its string form, as a
call, a decorator or a context manager.

A "no GPU" test patches a function the original calls; ported to
``torch.accelerator``, the code would no longer reach the patch (the test gets a
device on CUDA, or fails on the CPU). The file's calls of a patched function are
therefore left as they are (reported); the patch is reported where it is, as is a
patch of another module's view of ``torch.cuda`` (``"pkg.train.torch.cuda.X"``),
whose module the user should port with the test in mind.

Read from the ``ast`` before the passes run, once per file that mentions both.
"""

from __future__ import annotations

import ast
from typing import Dict, Mapping, Optional, Sequence, Set, Tuple

from codemod.passes.names import ModuleFacts, ast_position, dotted_name

PATCHERS = {"unittest.mock.patch", "mock.patch"}
OBJECT_PATCHERS = {"unittest.mock.patch.object", "mock.patch.object"}
CUDA = "torch.cuda"


def _string(node: Optional[ast.AST]) -> Optional[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _is_monkeypatch(func: ast.AST) -> bool:
    name = dotted_name(func) or ""
    return name.endswith("setattr") and "monkeypatch" in name.lower()


def patch_target(call: ast.Call, facts: ModuleFacts) -> Optional[str]:
    """The dotted target of a patch of ``torch.cuda`` (or of a module's view of it)."""
    callee = facts.qualified_name(call.func) or dotted_name(call.func) or ""
    args = call.args
    if (callee in PATCHERS or _is_monkeypatch(call.func)) and args:
        target = _string(args[0])
        if target and (target.startswith(CUDA + ".") or f".{CUDA}." in target):
            return target
    if (callee in OBJECT_PATCHERS or _is_monkeypatch(call.func)) and len(args) >= 2:
        owner, name = facts.qualified_name(args[0]), _string(args[1])
        if name and owner and (owner == CUDA or owner.startswith(CUDA + ".")):
            return f"{owner}.{name}"
    return None


def patched_cuda(
    tree: ast.Module, facts: ModuleFacts, lines: Sequence[str]
) -> Dict[Tuple[int, int], str]:
    """(line, 1-based column, where libcst puts it) of each patch call -> its target."""
    return {
        ast_position(node, lines): target
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for target in [patch_target(node, facts)]
        if target
    }


def patched_here(patches: Dict[Tuple[int, int], str]) -> Set[str]:
    """The ``torch.cuda`` names this module's own calls reach (not another's view)."""
    return {t for t in patches.values() if t.startswith(CUDA + ".")}


PATCHED = (
    ": kept, as a test in this file patches it (mock.patch, monkeypatch.setattr), "
    "which the ported call would no longer reach"
)
PATCHED_ELSEWHERE = (
    ": kept, as a test ({where}) patches it through this module's view of "
    "torch.cuda, which the ported call would no longer reach"
)
PATCHED_THROUGH_IMPORTS = (
    ": kept, as a test ({where}) that imports this module (directly or through "
    "others of the run) patches it, which the ported call would no longer reach"
)


def elsewhere_reason(where: str, how: str) -> str:
    """Why a call stays for a patch in another file: ``how`` is "view"
    (``pkg.m.torch.cuda.X``) or "import" (``torch.cuda.X``, from a test that
    imports the module)."""
    template = PATCHED_ELSEWHERE if how == "view" else PATCHED_THROUGH_IMPORTS
    return template.format(where=where)


def patch_reason(
    called: Set[Optional[str]], here: Set[str], elsewhere: Mapping[str, str]
) -> str:
    """Why a site that calls ``called`` stays as written for a patch ("" if no
    test patches any of them): one in this file, or one in another file
    (``elsewhere``: name -> ``elsewhere_reason``)."""
    if called & here:
        return PATCHED
    for name in sorted(n for n in called if n in elsewhere):  # type: ignore
        return elsewhere[name]
    return ""
