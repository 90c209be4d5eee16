"""The oldest torch release a project declares it runs on (``torch>=2.4`` in its
runtime requirements): the target torch release when none is configured.

Apart from ``pyproject`` because it reads the project's packaging files
(pyproject.toml ``[project]``, setup.cfg, setup.py, requirements*.txt), never
torchport's own configuration.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import List, Optional, Tuple

from codemod.config.pyproject import toml_library
from codemod.model.rule import TorchVersion, parse_version
from codemod.run.io import open_bounded, read_bounded

_PROJECT_FILES = ("setup.cfg", "setup.py", "requirements.txt")


def project_root(paths: List[str]) -> Optional[Path]:
    """Without a pyproject.toml: the nearest folder with setup.cfg, setup.py or
    requirements.txt above the first path."""
    for raw in paths[:1]:
        start = Path.cwd() if raw == "-" else Path(os.path.realpath(raw))
        for directory in [start, *start.parents]:
            if any((directory / n).is_file() for n in _PROJECT_FILES):
                return directory
    return None


def declared_torch(root: Path) -> Optional[Tuple[TorchVersion, str]]:
    """The oldest torch the project's runtime requirements allow (``torch>=2.4`` ->
    (2, 4)), and the file that says so.

    Only real runtime requirements count, first found wins: pyproject.toml
    ``[project].dependencies``, setup.cfg ``install_requires``, setup.py
    ``install_requires``, then requirements*.txt. Extras (test, dev, ...) never do:
    a test pin says nothing about the oldest release users run.
    """
    sources = [
        (root / "pyproject.toml", _pyproject_requirements),
        (root / "setup.cfg", _setup_cfg_requirements),
        (root / "setup.py", _setup_py_requirements),
    ]
    sources += [(path, _requirements_txt) for path in _requirements_files(root)]
    for path, read in sources:
        try:
            requirements = read(path) if path.is_file() else []
        except (OSError, ValueError, SyntaxError, RecursionError, MemoryError):
            continue  # an unreadable file declares nothing; the next source may
        floors = [v for v in map(torch_floor, requirements) if v is not None]
        if floors:
            return min(floors), str(path)
    return None


def _requirements_files(root: Path) -> List[Path]:
    """requirements*.txt, skipping those for tests, development, docs and linting."""
    extra = re.compile(r"test|dev|doc|lint|ci\b|bench|example", re.IGNORECASE)
    return [
        p for p in sorted(root.glob("requirements*.txt")) if not extra.search(p.name)
    ]


def _pyproject_requirements(path: Path) -> List[str]:
    with open_bounded(path) as handle:
        dependencies = (
            toml_library().load(handle).get("project", {}).get("dependencies", [])
        )
    return [d for d in dependencies if isinstance(d, str)]


def _setup_cfg_requirements(path: Path) -> List[str]:
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(read_bounded(path).decode("utf-8"), str(path))
        value = parser.get("options", "install_requires", fallback="")
    except configparser.Error as error:
        raise ValueError(str(error)) from None
    return [line.split("#", 1)[0].strip() for line in value.splitlines()]


def _setup_py_requirements(path: Path) -> List[str]:
    """String literals of ``setup(install_requires=[...])``, also through a
    module-level name (``install_requires=REQUIRED``). setup.py is never run."""
    import ast

    tree = ast.parse(read_bounded(path).decode("utf-8", errors="replace"))
    assigned = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found: List[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg != "install_requires":
                continue
            value = keyword.value
            if isinstance(value, ast.Name):
                value = assigned.get(value.id, value)
            if isinstance(value, (ast.List, ast.Tuple)):
                found += [
                    e.value
                    for e in value.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                ]
    return found


def _requirements_txt(path: Path) -> List[str]:
    lines = read_bounded(path).decode("utf-8", errors="replace").splitlines()
    # Options (-r, -e, --index-url) and comments are not requirements.
    return [
        line.split(" #", 1)[0].strip()
        for line in lines
        if line.strip() and not line.lstrip().startswith(("#", "-"))
    ]


# The operators whose version bounds a requirement from below.
_FLOOR_OPERATORS = (">=", "==", "~=", "===", ">")


# A requirement's name (PEP 508): what decides, before packaging is imported, that
# a requirement is not torch's or bounds nothing from below.
_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9._-]+)")


def torch_floor(requirement: str) -> Optional[TorchVersion]:
    """``"torch>=2.4,<3"`` -> (2, 4); None when it is not torch or has no lower bound."""
    name = _REQUIREMENT_NAME.match(requirement)
    if name is None or name.group(1).lower().replace("_", "-") != "torch":
        return None
    if not any(operator in requirement for operator in (">", "=")):
        return None  # `torch`, `torch<3`, `torch @ URL`: no lower bound
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        parsed = Requirement(requirement)
    except InvalidRequirement:
        return None
    if parsed.name.lower().replace("_", "-") != "torch":
        return None
    return _highest_floor((s.operator, s.version) for s in parsed.specifier)


def _highest_floor(specifiers) -> Optional[TorchVersion]:
    floors = []
    for operator, version in specifiers:
        if operator in _FLOOR_OPERATORS:
            try:
                floors.append(parse_version(version))
            except ValueError:  # "2.*", "2": no minor release to target
                continue
    return max(floors) if floors else None
