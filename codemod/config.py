"""Configuration: ``[tool.torchport]`` in the nearest pyproject.toml, merged with flags.

Command-line flags win over the file. The target torch release comes from
``--target-torch``, else ``target-torch`` in the file, else the project's own
declared ``torch>=`` requirement, else ``DEFAULT_TARGET_TORCH``.
"""

from __future__ import annotations

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
    elif pyproject is not None:
        declared = declared_torch(pyproject.parent)
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
