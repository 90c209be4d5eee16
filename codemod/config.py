"""Configuration: ``[tool.torchport]`` in the nearest pyproject.toml, merged with flags.

Command-line flags win over the file. The target torch release comes from
``--target-torch``, else ``target-torch`` in the file, else the project's own
declared ``torch>=`` requirement, else ``DEFAULT_TARGET_TORCH``.
"""

from __future__ import annotations

import configparser
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from codemod.options import DEFAULT_TARGET_TORCH, Options
from codemod.rules import Selection, TorchVersion, parse_version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ConfigError(Exception):
    """A bad configuration value; the message names the file and the key."""


@dataclass(frozen=True)
class Settings:
    options: Options
    format: bool
    exclude: Optional[Callable[[Path, bool], bool]]
    root: Optional[Path]
    target_source: str  # where the target torch release came from


# key -> expected type(s), for validation of [tool.torchport]
KEYS: Dict[str, Tuple[type, ...]] = {
    "select": (list,),
    "extend-select": (list,),
    "ignore": (list,),
    "exclude": (list,),
    "extend-exclude": (list,),
    "target-torch": (str,),
    "device-name": (str,),
    "device-import": (str,),
    "unsafe-fixes": (bool,),
    "format": (bool,),
}


def find_pyproject(paths: Iterable[str]) -> Optional[Path]:
    """The nearest pyproject.toml above the first path (like Ruff and Black)."""
    for raw in paths:
        start = Path.cwd() if raw == "-" else Path(raw).resolve()
        for directory in [start, *start.parents]:
            candidate = directory / "pyproject.toml"
            if candidate.is_file():
                return candidate
        break
    return None


def _project_root(paths: List[str]) -> Optional[Path]:
    """Without a pyproject.toml: the nearest folder with setup.cfg, setup.py or
    requirements.txt above the first path."""
    for raw in paths[:1]:
        start = Path.cwd() if raw == "-" else Path(raw).resolve()
        for directory in [start, *start.parents]:
            if any((directory / n).is_file() for n in _PROJECT_FILES):
                return directory
    return None


_PROJECT_FILES = ("setup.cfg", "setup.py", "requirements.txt")


def read_table(pyproject: Path) -> Dict[str, Any]:
    try:
        with open(pyproject, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{pyproject}: cannot read: {error}")
    table = data.get("tool", {}).get("torchport", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.torchport] must be a table")
    for key, value in table.items():
        if key not in KEYS:
            known = ", ".join(sorted(KEYS))
            raise ConfigError(
                f"{pyproject}: unknown key tool.torchport.{key} (known: {known})"
            )
        if not isinstance(value, KEYS[key]):
            expected = " or ".join(t.__name__ for t in KEYS[key])
            raise ConfigError(f"{pyproject}: tool.torchport.{key} must be a {expected}")
    return table


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
        except (OSError, ValueError, SyntaxError, configparser.Error):
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
    with open(path, "rb") as handle:
        dependencies = tomllib.load(handle).get("project", {}).get("dependencies", [])
    return [d for d in dependencies if isinstance(d, str)]


def _setup_cfg_requirements(path: Path) -> List[str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path, encoding="utf-8")
    value = parser.get("options", "install_requires", fallback="")
    return [line.split("#", 1)[0].strip() for line in value.splitlines()]


def _setup_py_requirements(path: Path) -> List[str]:
    """String literals of ``setup(install_requires=[...])``, also through a
    module-level name (``install_requires=REQUIRED``). setup.py is never run."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
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
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    # Options (-r, -e, --index-url) and comments are not requirements.
    return [
        line.split(" #", 1)[0].strip()
        for line in lines
        if line.strip() and not line.lstrip().startswith(("#", "-"))
    ]


# The operators whose version bounds a requirement from below.
_FLOOR_OPERATORS = (">=", "==", "~=", "===", ">")


def torch_floor(requirement: str) -> Optional[TorchVersion]:
    """``"torch>=2.4,<3"`` -> (2, 4); None when it is not torch or has no lower bound."""
    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:  # packaging comes with black, but do without it if need be
        return _torch_floor_plain(requirement)
    try:
        parsed = Requirement(requirement)
    except InvalidRequirement:
        return None
    if parsed.name.lower().replace("_", "-") != "torch":
        return None
    return _highest_floor((s.operator, s.version) for s in parsed.specifier)


_PLAIN_REQUIREMENT = re.compile(
    r"\s*torch\s*(?:\[[^\]]*\])?\s*\(?([^;@]*)", re.IGNORECASE
)
_PLAIN_SPECIFIER = re.compile(r"\s*(===|~=|==|!=|<=|>=|<|>)\s*([^\s,)]+)")


def _torch_floor_plain(requirement: str) -> Optional[TorchVersion]:
    """``torch_floor`` for when packaging is missing: PEP 508 specifiers by hand."""
    match = _PLAIN_REQUIREMENT.match(requirement)
    if not match:
        return None
    specifiers = match.group(1)
    if specifiers and specifiers.strip()[:1] not in ("", "=", "~", "!", "<", ">", ")"):
        return None  # the name only starts with "torch" (torchvision, torch-geometric)
    pairs = [m.groups() for m in _PLAIN_SPECIFIER.finditer(specifiers)]
    return _highest_floor(pairs)


def _highest_floor(specifiers) -> Optional[TorchVersion]:
    floors = []
    for operator, version in specifiers:
        if operator in _FLOOR_OPERATORS:
            try:
                floors.append(parse_version(version))
            except ValueError:  # "2.*", "2": no minor release to target
                continue
    return max(floors) if floors else None


def _codes(value: Optional[str]) -> Optional[List[str]]:
    if value is None:
        return None
    return [c.strip() for c in value.split(",") if c.strip()]


def resolve_options(paths: Iterable[str], flags: Dict[str, Any]) -> Settings:
    """Merge flags (None = not given) over the nearest ``[tool.torchport]``."""
    paths = list(paths)
    pyproject = find_pyproject(paths)
    table = read_table(pyproject) if pyproject else {}
    where = str(pyproject) if pyproject else "command line"

    def pick(key: str, default: Any = None) -> Any:
        return flags[key] if flags.get(key) is not None else table.get(key, default)

    select = _codes(flags.get("select")) or table.get("select") or ["TP"]
    select = list(select) + list(table.get("extend-select", []))
    ignore = _codes(flags.get("ignore")) or table.get("ignore") or []
    for code in select + ignore:
        if not re.fullmatch(r"(TP\d{0,3}|ALL)", str(code).upper()):
            raise ConfigError(f"{where}: not a rule code or prefix: {code!r}")

    target_source = "default"
    target: TorchVersion = DEFAULT_TARGET_TORCH
    raw_target = pick("target-torch")
    if raw_target is not None:
        try:
            target = parse_version(raw_target)
        except ValueError as error:
            raise ConfigError(f"{where}: target-torch: {error}")
        target_source = (
            "--target-torch" if flags.get("target-torch") else str(pyproject)
        )
    else:
        root = pyproject.parent if pyproject else _project_root(paths)
        declared = declared_torch(root) if root else None
        if declared:
            target, target_source = declared

    device_name = pick("device-name", "DEVICE")
    if not str(device_name).isidentifier():
        raise ConfigError(
            f"{where}: device-name must be a Python identifier: {device_name!r}"
        )

    options = Options(
        target_torch=target,
        device_name=device_name,
        unsafe_fixes=bool(pick("unsafe-fixes", False)),
        selection=Selection(select, ignore),
        device_import=table.get("device-import"),
    )
    exclude = _exclude(pyproject.parent if pyproject else None, table)
    return Settings(
        options,
        bool(pick("format", True)),
        exclude,
        pyproject.parent if pyproject else None,
        target_source,
    )


def _exclude(root: Optional[Path], table: Dict[str, Any]):
    patterns = list(table.get("exclude", [])) + list(table.get("extend-exclude", []))
    if not patterns or root is None:
        return None
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines(patterns)

    def excluded(path: Path, is_dir: bool) -> bool:
        try:
            relative = path.resolve().relative_to(root).as_posix()
        except ValueError:
            return False
        return spec.match_file(relative + "/" if is_dir else relative)

    return excluded
