"""``[tool.torchport]``: finding the pyproject.toml that configures a run, reading
its table, and checking every key and value before anything runs.

Apart from ``settings`` (which merges this table with the flags) so that each
check, and the error message it gives, is in one place.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

from codemod.model.rule import parse_version
from codemod.model.text import one_line
from codemod.run.io import open_bounded, os_reason, read_bounded


def toml_library():
    """tomllib, imported where a pyproject.toml is read (most runs read none)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


class ConfigError(Exception):
    """A bad configuration value; the message names the file and the key."""


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
        path = Path.cwd() if raw == "-" else Path(os.path.realpath(raw))
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


def load_toml(pyproject: Path) -> Dict[str, Any]:
    """The whole of ``pyproject``, read bounded (ConfigError, one line, otherwise)."""
    tomllib = toml_library()
    try:
        with open_bounded(pyproject) as handle:
            return tomllib.load(handle)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{pyproject}: cannot read: {one_line(error)}") from None
    except (RecursionError, MemoryError):  # the reader recurses once a level
        raise ConfigError(
            f"{pyproject}: cannot read: arrays or tables nested too deep for the"
            " TOML reader"
        ) from None


def read_table(pyproject: Path) -> Dict[str, Any]:
    """``[tool.torchport]`` of ``pyproject``, checked key by key."""
    data = load_toml(pyproject)
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
        check_codes(where, value)
    elif key in ("exclude", "extend-exclude"):
        if not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where} must be a list of strings (glob patterns)")
    elif key == "per-file-ignores":
        for pattern, codes in value.items():
            if not isinstance(codes, list):
                raise ConfigError(f'{where}."{pattern}" must be a list of rule codes')
            check_codes(f'{where}."{pattern}"', codes)
    elif key == "target-torch":
        try:
            parse_version(value)
        except ValueError as error:
            raise ConfigError(f"{where}: {error}")
    elif key == "device-name":
        check_device_name(where, value)
    elif key == "device-import":
        from codemod.rewrite.device.text import DeviceImport  # only if configured

        try:
            DeviceImport.parse(value)
        except ValueError as error:
            raise ConfigError(f"{where}: {error}")


def check_codes(where: str, codes: Any) -> None:
    """Each of ``codes`` must be a rule code or prefix some rule has; ConfigError
    naming ``where`` otherwise."""
    for code in codes:
        if not isinstance(code, str):
            raise ConfigError(f"{where}: not a rule code or prefix: {code!r}")
    unknown = [c for c in codes if not _known_prefix(c)]
    if unknown:
        raise ConfigError(f"{where}: {_unknown_codes(unknown)}")


def _known_prefix(code: str) -> bool:
    """``ALL``, ``TP``, or the start of at least one rule's code (``TP2``, ``TP201``)."""
    from codemod.rules import all_rules

    code = code.upper()
    if not _CODE.fullmatch(code):
        return False
    return code == "ALL" or any(c.startswith(code) for c in all_rules())


def _unknown_codes(codes: List[str]) -> str:
    import difflib

    from codemod.rules import all_rules

    known = list(all_rules())
    parts = []
    for code in codes:
        if len(code) <= 3:  # a family: name the families there are
            families = sorted({c[:3] for c in known})
            hint = f" (the families are {', '.join(families)})"
        else:
            close = difflib.get_close_matches(code.upper(), known, n=3, cutoff=0.6)
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        parts.append(f"{code!r}{hint}")
    what = "rule code or prefix" if len(codes) == 1 else "rule codes or prefixes"
    return f"unknown {what} {', '.join(parts)}; see `torchport rule --all`"


# Names a device binding must not take: the module would lose what they mean.
_RESERVED_NAMES = {"torch"}


def check_device_name(where: str, name: Any) -> str:
    """``name`` if it can be the device binding; ConfigError saying why not."""
    import builtins
    import keyword

    if not isinstance(name, str) or not name.isidentifier():
        raise ConfigError(f"{where} must be a Python identifier: {name!r}")
    if keyword.iskeyword(name):
        raise ConfigError(f"{where}: {name!r} is a Python keyword; choose another name")
    if hasattr(builtins, name):
        raise ConfigError(
            f"{where}: {name!r} is a Python builtin; binding it would hide the"
            " builtin, choose another name"
        )
    if name in _RESERVED_NAMES:
        raise ConfigError(
            f"{where}: {name!r} is the torch module itself; choose another name"
        )
    return name


def check_device_import(where: str, statement: str, root: Optional[Path]) -> bool:
    """``from MODULE import NAME`` must name a module of the project (or an
    importable one) that binds NAME; found by looking at files, never importing.
    True when NAME is a function of no required arguments defined there (an
    accessor: code reads the device as ``NAME()``)."""
    import ast

    match = re.match(r"\s*from\s+([\w.]+)\s+import\s+(\w+)", statement)
    module, name = match.group(1), match.group(2)
    parts = module.split(".")
    bases = [root, root / "src"] if root is not None else [Path.cwd()]
    bases += [Path(p) for p in sys.path if p and Path(p).is_dir()]
    for base in bases:
        candidates = [
            base.joinpath(*parts).with_suffix(".py"),
            base.joinpath(*parts, "__init__.py"),
        ]
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            if (
                base.joinpath(*parts).is_dir()
                or base.joinpath(*parts).with_suffix(".so").exists()
            ):
                return False  # a namespace package or an extension: unread
            continue
        try:
            text = read_bounded(found).decode("utf-8", errors="replace")
        except OSError as error:
            raise ConfigError(f"{where}: cannot read {found}: {os_reason(error)}")
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return False  # torchport reports that file itself
        except (RecursionError, MemoryError):  # CPython's compiler gives up too
            raise ConfigError(
                f"{where}: {found} cannot be compiled by Python (nested too deep or"
                " too large); the rewritten code would fail importing it"
            ) from None
        if name in _module_names(tree):
            return _is_accessor(tree, name)
        raise ConfigError(f"{where}: {found} does not define {name!r}")
    where_looked = f"in {root}" if root is not None else "here"
    raise ConfigError(
        f"{where}: module {module!r} not found {where_looked} nor on sys.path;"
        " the rewritten code would fail with ModuleNotFoundError"
    )


def _is_accessor(tree, name: str) -> bool:
    """``name`` is bound at the module's top level only by a ``def`` that takes no
    required arguments."""
    import ast

    bindings = [
        stmt
        for stmt in tree.body
        if name in _module_names(ast.Module(body=[stmt], type_ignores=[]))
    ]
    return bool(bindings) and all(
        isinstance(stmt, ast.FunctionDef)
        and stmt.name == name
        and len(stmt.args.args) + len(stmt.args.posonlyargs) == len(stmt.args.defaults)
        and all(d is not None for d in stmt.args.kw_defaults)
        for stmt in bindings
    )


def _module_names(tree) -> set:
    """Names bound at module level (anything, when it has a star import)."""
    import ast

    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return _Anything()
                names.add((alias.asname or alias.name).split(".")[0])
    return names


class _Anything(set):
    def __contains__(self, item) -> bool:
        return True
