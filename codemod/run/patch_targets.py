"""Patches of a module's view of ``torch.cuda`` made by a test in another file.

``mock.patch("pkg.train.torch.cuda.is_available", return_value=False)`` in
tests/test_train.py reaches the calls in pkg/train.py; ported to ``torch.accelerator``
they would no longer reach it. Before the files are processed (one by one, in
workers), the files that can hold such a patch are read, each patched module is
found among the files of the run, and that module's calls of the name are then left
as they are, reported with the test that patches them.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from codemod.run.io import NotRegularError, read_pinned
from codemod.run.pinned import LinkOnTheWay

VIEW = ".torch.cuda."
Patched = Dict[str, Tuple[Tuple[str, str], ...]]  # file -> ((name, where), ...)


def patched_modules(files: Sequence[Path]) -> Patched:
    """Each file of ``files`` whose module a test among them patches, with what."""
    found: Dict[str, List[Tuple[str, str]]] = {}
    modules = None  # dotted name -> file, built on the first patch found
    for path in files:
        for module, name, where in _patches_in(path):
            if modules is None:
                modules = _module_index(files)
            target = modules.get(module)
            if target is not None:
                found.setdefault(target, []).append((name, where))
    return {path: tuple(pairs) for path, pairs in found.items()}


def _patches_in(path: Path) -> List[Tuple[str, str, str]]:
    """(module, torch.cuda name, "path:line") of each patch of a module's view."""
    if path.suffix != ".py":
        return []
    try:  # as a worker reads it: regular, no link on the way, never blocking
        data, _ = read_pinned(path)
    except (OSError, NotRegularError, LinkOnTheWay):
        return []  # the file's own run says why
    if VIEW.encode() not in data or not (b"patch" in data or b"setattr" in data):
        return []
    try:
        source = data.decode("utf-8")
        tree = ast.parse(source)
    except (UnicodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    # Here only: the passes' floor loads libcst, which a run of no such file skips.
    from codemod.passes.names import ModuleFacts
    from codemod.passes.patched import patched_cuda

    patches = patched_cuda(tree, ModuleFacts.of(tree, source), source.splitlines())
    return [
        (module, "torch.cuda." + name, f"{path}:{line}")
        for (line, _), target in sorted(patches.items())
        for module, view, name in [target.partition(VIEW)]
        if view and module
    ]


def _module_index(files: Sequence[Path]) -> Dict[str, str]:
    """Every dotted name a file of the run can be imported as (``pkg.train``,
    ``train``), for the names only one file can be."""
    seen: Dict[str, List[str]] = {}
    for path in files:
        if path.suffix != ".py":
            continue
        parts = list(path.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        for start in range(len(parts)):
            if all(p.isidentifier() for p in parts[start:]):
                seen.setdefault(".".join(parts[start:]), []).append(str(path))
    return {name: paths[0] for name, paths in seen.items() if len(paths) == 1}
