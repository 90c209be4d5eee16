"""What one file of a run must know of the others, read before the files are
processed (one by one, in workers).

- ``mock.patch("pkg.train.torch.cuda.is_available", return_value=False)`` in
  tests/test_train.py reaches the calls in pkg/train.py; ported to
  ``torch.accelerator`` they would no longer reach it. The patched module is found
  among the files of the run, and its calls of the name are left as they are,
  reported with the test that patches them.
- ``mock.patch("torch.cuda.device_count", return_value=4)`` reaches every call of
  the name the test makes, through the modules it imports: the files of the run
  that the test reaches through imports keep their calls of it too.
- A class whose modules share a parameter (``codemod.passes.tied_parameters``):
  its name goes to every file, where a move of an instance is reported.

The tests read are the run's files and the project's tests outside the run
(``codemod.run.project_tests``), which are read, never ported.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

from codemod.run.io import NotRegularError, read_pinned
from codemod.run.pinned import LinkOnTheWay
from codemod.run.star_exports import STAR, star_exports

VIEW = ".torch.cuda."
CUDA = "torch.cuda."
TIE = re.compile(rb"^[ \t]*\w+(?:\.\w+){2,}[ \t]*=[ \t]*\w+(?:\.\w+){2,}", re.M)
Patched = Dict[str, Tuple[Tuple[str, str, str], ...]]  # file -> ((name, where, how),)
VIA_VIEW, VIA_IMPORT = "view", "import"  # how the patch reaches the file's calls


@dataclass
class RunFacts:
    patched: Patched = field(default_factory=dict)
    tied: Tuple[Tuple[str, str, str, str], ...] = ()  # Options.tied_classes
    tests_read: int = 0  # the project's test files outside the run, read
    kept_for_them: int = 0  # files of the run that keep calls those tests patch
    star: Dict[str, tuple] = field(default_factory=dict)  # Options.star_exports


def read_run(files: Sequence[Path], tests=()) -> RunFacts:
    """Patches the tests among ``files`` and ``tests`` make of the run's modules,
    and the run's tying classes. ``tests`` may be a function that finds them,
    called only when a file of the run mentions ``cuda``."""
    found: Dict[str, List[Tuple[str, str, str]]] = {}
    tied: List[Tuple[str, str, str, str]] = []
    index: Optional[Dict[str, str]] = None  # dotted name -> file, built on first need
    outside: Set[str] = set()  # the files patched by tests outside the run
    run = {os.path.realpath(p): str(p) for p in files if p.suffix == ".py"}
    cuda = False  # whether a test could reach a call of the run
    read = 0  # the tests outside the run read
    star: Dict[str, tuple] = {}
    exports: Dict[str, object] = {}  # source file -> what its star import brings
    for number, path in enumerate(_then(files, tests, lambda: cuda)):
        read += number >= len(files)
        tree, data = _parsed(path)
        cuda = cuda or b"cuda" in data
        if number < len(files) and b"cuda" in data and STAR.search(data):
            index = _module_index(files) if index is None else index
            whole = tree or _parse(data)
            if whole is not None:
                star[str(path)] = star_exports(
                    whole, path, index, run, _parse_file, exports
                )
        if tree is None:
            continue
        if number < len(files) and TIE.search(data):  # ties of the run's classes
            from codemod.passes.tied_parameters import ties_in

            tied += [(c, t, m, f"{path}:{n}") for c, t, m, n in ties_in(tree)]
        patches = _patches(tree, data)
        if not patches:
            continue
        if index is None:
            index = _module_index(files)
        for target, where in patches:
            module, view, name = target.partition(VIEW)
            reached = []
            if view and module in index:
                reached, how, target = [index[module]], VIA_VIEW, CUDA + name
            elif target.startswith(CUDA):
                reached, how = _reached(path, index, run), VIA_IMPORT
            for file in reached:
                found.setdefault(file, []).append((target, f"{path}:{where}", how))
                if number >= len(files):
                    outside.add(file)
    patched = {p: tuple(dict.fromkeys(pairs)) for p, pairs in found.items()}
    return RunFacts(patched, tuple(tied), read, len(outside), star)


def _then(files: Sequence[Path], tests, wanted):
    """The run's files, then the tests (found when ``wanted()`` after the files)."""
    yield from files
    if callable(tests):
        tests = tests() if wanted() else []
    yield from tests


def tests_note(facts: RunFacts) -> str:
    """The summary's word on the project's tests read outside the run."""
    kept = facts.kept_for_them
    return (
        f"torchport read the project's {facts.tests_read} test file"
        f"{'s' if facts.tests_read != 1 else ''} outside the run for patches of"
        f" torch.cuda (read, not ported): their patches reach {kept} file"
        f"{'s' if kept != 1 else ''} of the run, whose calls of the patched names"
        " are kept as written"
    )


def patched_modules(files: Sequence[Path]) -> Patched:
    """Each file of ``files`` whose module a test among them patches, with what."""
    return read_run(files).patched


def _read(path: Path) -> Optional[bytes]:
    if path.suffix != ".py":
        return None
    try:  # as a worker reads it: regular, no link on the way, never blocking
        data, _ = read_pinned(path)
    except (OSError, NotRegularError, LinkOnTheWay):
        return None  # the file's own run says why
    return data


def _parse(data: bytes) -> Optional[ast.Module]:
    try:
        return ast.parse(data.decode("utf-8"))
    except (UnicodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _parse_file(path: Path) -> Optional[ast.Module]:
    data = _read(path)
    return None if data is None else _parse(data)


def _parsed(path: Path):
    """The file's ``ast`` where it can hold a patch or a tie, and its bytes."""
    data = _read(path)
    if data is None:
        return None, b""
    patch = b"torch.cuda" in data and (b"patch" in data or b"setattr" in data)
    if not (patch or TIE.search(data)):
        return None, data
    return _parse(data), data


def _patches(tree: ast.Module, data: bytes) -> List[Tuple[str, int]]:
    """(target, line) of each patch of ``torch.cuda`` or a module's view of it."""
    if b"torch.cuda" not in data:
        return []
    # Here only: the passes' floor loads libcst, which a run of no such file skips.
    from codemod.passes.names import ModuleFacts
    from codemod.passes.patched import patched_cuda

    source = data.decode("utf-8")
    patches = patched_cuda(tree, ModuleFacts.of(tree, source), source.splitlines())
    return [(target, line) for (line, _), target in sorted(patches.items())]


def _reached(test: Path, index: Dict[str, str], run: Dict[str, str]) -> List[str]:
    """The files of the run that ``test`` imports, directly or through them."""
    seen: Set[str] = set()
    todo = [str(test)]
    while todo:
        path = todo.pop()
        data = _read(Path(path))
        tree = _parse(data) if data and b"import" in data else None
        if tree is None:
            continue
        for reached in _imported(tree, Path(path), index, run):
            if reached not in seen and reached != str(test):
                seen.add(reached)
                todo.append(reached)
    return sorted(seen)


def _imported(tree, path: Path, index, run) -> Set[str]:
    """The files of the run one module's imports name."""
    names: Set[str] = set()
    files: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                names.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            parts = node.module.split(".")
            names.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.ImportFrom):  # relative: found by folder
            base = Path(os.path.realpath(path)).parent
            for _ in range(node.level - 1):
                base = base.parent
            if node.module:
                base = base.joinpath(*node.module.split("."))
            modules = [base] + [base / a.name for a in node.names]
            for module in modules:
                for candidate in (module.with_suffix(".py"), module / "__init__.py"):
                    if str(candidate) in run:
                        files.add(run[str(candidate)])
    return files | {index[n] for n in names if n in index}


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
