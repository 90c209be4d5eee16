"""Configuration: ``[tool.torchport]`` of one pyproject.toml, merged with flags.

Command-line flags win over the file; rules are selected in layers, as Ruff does
(``selection``). The target torch release comes from
``--target-torch``, else ``target-torch`` in the file, else the project's own
declared ``torch>=`` requirement, else ``DEFAULT_TARGET_TORCH``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional

from codemod.config.pyproject import (
    ConfigError,
    check_codes,
    check_device_import,
    check_device_name,
    find_pyproject,
)
from codemod.config.requirements import declared_torch, project_root
from codemod.config.selection import Layer, selection
from codemod.config.table import checked_table
from codemod.model.options import DEFAULT_TARGET_TORCH, Options
from codemod.model.rule import Selection, TorchVersion, parse_version
from codemod.run.files import Globs, exclude_globs


@dataclass(frozen=True)
class Settings:
    options: Options
    format: bool
    exclude: Optional[Callable[[Path, bool], bool]]
    root: Optional[Path]  # the folder of the pyproject.toml, when one configures
    target_source: str  # where the target torch release came from
    per_file: Optional["PerFileOptions"] = None  # per-file-ignores, when configured
    config: Optional[Path] = None  # the pyproject.toml whose [tool.torchport] applies


def _codes(flag: str, value: Any) -> Optional[List[str]]:
    """Codes from a flag given once ("TP1,TP2") or repeated (a tuple); they add up."""
    if value is None or value == ():
        return None
    values = [value] if isinstance(value, str) else list(value)
    codes = [c.strip() for v in values for c in v.split(",") if c.strip()]
    check_codes(f"--{flag}", codes)
    return codes


def resolve_options(paths: Iterable[str], flags: Dict[str, Any]) -> Settings:
    """The settings of the folder holding all ``paths``: flags (None = not given)
    merged over the nearest ``[tool.torchport]``."""
    paths = list(paths)
    pyproject = find_pyproject(paths)
    project = project_root(paths)
    first = paths[0] if paths and paths[0] != "-" else "."
    return resolve_settings(pyproject, project, flags, Path(first))


def resolve_settings(
    pyproject: Optional[Path],
    project: Optional[Path],
    flags: Dict[str, Any],
    black_path: Path,
) -> Settings:
    """Flags (None = not given) merged over ``[tool.torchport]`` of ``pyproject``
    (None: none applies); the declared torch read in the folder ``project``; the
    black configuration checked for ``black_path``."""
    table = (checked_table(pyproject) or {}) if pyproject else {}
    root = pyproject.parent if pyproject else None

    def pick(key: str, default: Any = None) -> Any:
        return flags[key] if flags.get(key) is not None else table.get(key, default)

    layers = [
        Layer(
            table.get("select"), table.get("extend-select", []), table.get("ignore", [])
        ),
        Layer(
            _codes("select", flags.get("select")),
            _codes("extend-select", flags.get("extend-select")) or [],
            _codes("ignore", flags.get("ignore")) or [],
        ),
    ]
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
    else:
        declared = declared_torch(project) if project else None
        if declared:
            target, target_source = declared

    device_name = pick("device-name", Options.device_name)
    if flags.get("device-name") is not None:
        check_device_name("--device-name", device_name)
    device_import_call = False
    if table.get("device-import"):
        device_import_call = check_device_import(
            f"{pyproject}: tool.torchport.device-import", table["device-import"], root
        )

    options = Options(
        target_torch=target,
        device_name=device_name,
        unsafe_fixes=bool(pick("unsafe-fixes", False)),
        selection=selection(layers),
        device_import=table.get("device-import"),
        device_import_call=device_import_call,
    )
    per_file = None
    if table.get("per-file-ignores") and root is not None:
        per_file = PerFileOptions(root, options, table["per-file-ignores"])
    if pick("format", True):
        _check_black_config(black_path)
    return Settings(
        options,
        bool(pick("format", True)),
        exclude_globs(
            root, [*table.get("exclude", []), *table.get("extend-exclude", [])]
        ),
        root,
        target_source,
        per_file,
        pyproject,
    )


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
            (Globs(root, [pattern]), codes) for pattern, codes in table.items()
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


def _check_black_config(path: Path) -> None:
    """A bad ``[tool.black]`` value is one configuration error, not one per file."""
    from codemod.rewrite.formatting import BlackConfigError, black_config, black_mode

    first = Path(os.path.realpath(path))
    try:
        if black_config(first) is None:
            return  # black's defaults: nothing to check, and no need to import black
        black_mode(first)
    except BlackConfigError as error:
        raise ConfigError(str(error)) from None
    except (RecursionError, MemoryError):
        raise ConfigError(
            f"{black_config(first)}: cannot read: nested too deep to read"
        ) from None
