"""Configuration: ``[tool.torchport]`` in the nearest pyproject.toml, merged with flags.

Command-line flags win over the file. The target torch release comes from
``--target-torch``, else ``target-torch`` in the file, else the project's own
declared ``torch>=`` requirement, else ``DEFAULT_TARGET_TORCH``.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from codemod.passes.base import DEFAULT_TARGET_TORCH, Options
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
    per_file: Optional["PerFileOptions"] = None  # per-file-ignores, when configured


_CODE = re.compile(r"TP\d{0,3}|ALL", re.IGNORECASE)

# key -> expected type(s), for validation of [tool.torchport]
KEYS: Dict[str, Tuple[type, ...]] = {
    "select": (list,),
    "extend-select": (list,),
    "ignore": (list,),
    "per-file-ignores": (dict,),
    "exclude": (list,),
    "extend-exclude": (list,),
    "target-torch": (str,),
    "device-name": (str,),
    "device-import": (str,),
    "unsafe-fixes": (bool,),
    "format": (bool,),
}
_TYPE_NAMES = {list: "list", dict: "table", str: "string", bool: "boolean"}


def find_pyproject(paths: Iterable[str]) -> Optional[Path]:
    """The nearest pyproject.toml at or above the folder holding all ``paths``."""
    folders = []
    for raw in paths:
        path = Path.cwd() if raw == "-" else Path(raw).resolve()
        folders.append(path if path.is_dir() else path.parent)
    if not folders:
        folders = [Path.cwd()]
    try:
        start = Path(os.path.commonpath([str(f) for f in folders]))
    except ValueError:  # different drives
        start = folders[0]
    for directory in [start, *start.parents]:
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def read_table(pyproject: Path) -> Dict[str, Any]:
    """``[tool.torchport]`` of ``pyproject``, checked key by key."""
    try:
        with open(pyproject, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{pyproject}: cannot read: {_one_line(error)}")
    tool = data.get("tool", {})
    table = tool.get("torchport", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: tool.torchport must be a table")
    for key, value in table.items():
        if key not in KEYS:
            known = ", ".join(sorted(KEYS))
            raise ConfigError(
                f"{pyproject}: unknown key tool.torchport.{key} (known: {known})"
            )
        if not isinstance(value, KEYS[key]):
            expected = " or ".join(_TYPE_NAMES[t] for t in KEYS[key])
            hint = ' (quote it: "2.6")' if key == "target-torch" else ""
            raise ConfigError(
                f"{pyproject}: tool.torchport.{key} must be a {expected}{hint}"
            )
        _check_value(pyproject, key, value)
    return table


def _check_value(pyproject: Path, key: str, value: Any) -> None:
    where = f"{pyproject}: tool.torchport.{key}"
    if key in ("select", "extend-select", "ignore"):
        _check_codes(where, value)
    elif key in ("exclude", "extend-exclude"):
        if not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where} must be a list of strings (glob patterns)")
    elif key == "per-file-ignores":
        for pattern, codes in value.items():
            if not isinstance(codes, list):
                raise ConfigError(f'{where}."{pattern}" must be a list of rule codes')
            _check_codes(f'{where}."{pattern}"', codes)
    elif key == "target-torch":
        try:
            parse_version(value)
        except ValueError as error:
            raise ConfigError(f"{where}: {error}")
    elif key == "device-name" and not value.isidentifier():
        raise ConfigError(f"{where} must be a Python identifier: {value!r}")
    elif key == "device-import":
        try:
            imported_name(value)
        except ValueError as error:
            raise ConfigError(f"{where}: {error}")


def _check_codes(where: str, codes: Any) -> None:
    for code in codes:
        if not isinstance(code, str) or not _CODE.fullmatch(code):
            raise ConfigError(f"{where}: not a rule code or prefix: {code!r}")


def imported_name(statement: str) -> str:
    """The name ``from MODULE import NAME [as ALIAS]`` binds; ValueError otherwise."""
    match = re.fullmatch(
        r"\s*from\s+(?P<module>[A-Za-z_][\w.]*)\s+import\s+(?P<name>\w+)"
        r"(?:\s+as\s+(?P<alias>\w+))?\s*",
        statement,
    )
    bound = match and (match.group("alias") or match.group("name"))
    if not bound or not bound.isidentifier() or match.group("module").endswith("."):
        raise ValueError(f"expected 'from MODULE import NAME', got {statement!r}")
    return bound


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


_TORCH_REQUIREMENT = re.compile(
    r"""(?:^|["'\s,])torch\s*(?:\[[^\]]*\])?\s*(?:==|>=|~=|===)\s*(\d+\.\d+)""",
    re.MULTILINE,
)


def declared_torch(root: Path) -> Optional[Tuple[TorchVersion, str]]:
    """The oldest torch the project declares it supports (``torch>=2.4`` -> (2, 4))."""
    candidates = [root / "pyproject.toml", root / "setup.cfg", root / "setup.py"]
    candidates += sorted(root.glob("requirements*.txt")) + sorted(
        root.glob("requirements/*.txt")
    )
    for path in candidates:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        versions = [parse_version(v) for v in _TORCH_REQUIREMENT.findall(text)]
        if versions:
            return min(versions), str(path)
    return None


def _codes(flag: str, value: Optional[str]) -> Optional[List[str]]:
    if value is None:
        return None
    codes = [c.strip() for c in value.split(",") if c.strip()]
    _check_codes(f"--{flag}", codes)
    return codes


def resolve_options(paths: Iterable[str], flags: Dict[str, Any]) -> Settings:
    """Merge flags (None = not given) over the nearest ``[tool.torchport]``."""
    paths = list(paths)
    pyproject = find_pyproject(paths)
    table = read_table(pyproject) if pyproject else {}
    root = pyproject.parent if pyproject else None

    def pick(key: str, default: Any = None) -> Any:
        return flags[key] if flags.get(key) is not None else table.get(key, default)

    select = _codes("select", flags.get("select")) or table.get("select") or ["TP"]
    select = list(select) + list(table.get("extend-select", []))
    ignore = _codes("ignore", flags.get("ignore")) or table.get("ignore") or []

    target_source = "default"
    target: TorchVersion = DEFAULT_TARGET_TORCH
    if flags.get("target-torch") is not None:
        try:
            target = parse_version(flags["target-torch"])
        except ValueError as error:
            raise ConfigError(f"--target-torch: {error}")
        target_source = "--target-torch"
    elif "target-torch" in table:
        target, target_source = parse_version(table["target-torch"]), str(pyproject)
    elif root is not None:
        declared = declared_torch(root)
        if declared:
            target, target_source = declared

    device_name = pick("device-name", "DEVICE")
    if not str(device_name).isidentifier():
        raise ConfigError(f"--device-name must be a Python identifier: {device_name!r}")

    options = Options(
        target_torch=target,
        device_name=device_name,
        unsafe_fixes=bool(pick("unsafe-fixes", False)),
        selection=Selection(select, ignore),
        device_import=table.get("device-import"),
    )
    per_file = None
    if table.get("per-file-ignores") and root is not None:
        per_file = PerFileOptions(root, options, table["per-file-ignores"])
    return Settings(
        options,
        bool(pick("format", True)),
        _exclude(root, table),
        root,
        target_source,
        per_file,
    )


class _Globs:
    """Gitignore-style patterns, matched against paths relative to ``root``.

    Picklable (it travels to the worker processes); compiled on first use.
    """

    def __init__(self, root: Path, patterns: Iterable[str]) -> None:
        self.root = root
        self.patterns = list(patterns)
        self._spec = None

    def __getstate__(self):
        return {"root": self.root, "patterns": self.patterns, "_spec": None}

    def __call__(self, path: Path, is_dir: bool = False) -> bool:
        if self._spec is None:
            import pathspec

            self._spec = pathspec.GitIgnoreSpec.from_lines(self.patterns)
        try:
            relative = Path(os.path.abspath(path)).relative_to(self.root).as_posix()
        except ValueError:
            try:
                relative = path.resolve().relative_to(self.root).as_posix()
            except ValueError:
                return False
        return self._spec.match_file(relative + "/" if is_dir else relative)


class _FileSelection(Selection):
    """The project's selection, less the codes a per-file-ignores entry drops."""

    def __init__(self, base: Selection, dropped: Iterable[str]) -> None:
        super().__init__(base.select, base.ignore)
        self.dropped = tuple(code.upper() for code in dropped)

    def enabled(self, code: str) -> bool:
        if any(p == "ALL" or code.startswith(p) for p in self.dropped):
            return False
        return super().enabled(code)


class PerFileOptions:
    """``per-file-ignores``: the Options for one file (picklable, for the workers)."""

    def __init__(
        self, root: Path, options: Options, table: Dict[str, List[str]]
    ) -> None:
        self.options = options
        self.entries = [
            (_Globs(root, [pattern]), codes) for pattern, codes in table.items()
        ]

    def __call__(self, path: Path) -> Options:
        dropped = [
            c for match, codes in self.entries if match(Path(path)) for c in codes
        ]
        if not dropped:
            return self.options
        return replace(
            self.options, selection=_FileSelection(self.options.selection, dropped)
        )


def _exclude(root: Optional[Path], table: Dict[str, Any]) -> Optional[_Globs]:
    patterns = list(table.get("exclude", [])) + list(table.get("extend-exclude", []))
    if not patterns or root is None:
        return None
    return _Globs(root, patterns)
