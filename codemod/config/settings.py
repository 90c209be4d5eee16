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

from codemod.model.options import DEFAULT_TARGET_TORCH, Options
from codemod.model.rule import Selection, TorchVersion, parse_version
from codemod.run.files import Globs, exclude_globs


def _toml():
    """tomllib, imported where a pyproject.toml is read (most runs read none)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


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


def _project_root(paths: List[str]) -> Optional[Path]:
    """Without a pyproject.toml: the nearest folder with setup.cfg, setup.py or
    requirements.txt above the first path."""
    for raw in paths[:1]:
        start = Path.cwd() if raw == "-" else Path(os.path.realpath(raw))
        for directory in [start, *start.parents]:
            if any((directory / n).is_file() for n in _PROJECT_FILES):
                return directory
    return None


_PROJECT_FILES = ("setup.cfg", "setup.py", "requirements.txt")


def read_table(pyproject: Path) -> Dict[str, Any]:
    """``[tool.torchport]`` of ``pyproject``, checked key by key."""
    tomllib = _toml()
    try:
        with open(pyproject, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
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
    elif key == "device-name":
        check_device_name(where, value)
    elif key == "device-import":
        from codemod.rewrite.imports import DeviceImport  # only where one is configured

        try:
            DeviceImport.parse(value)
        except ValueError as error:
            raise ConfigError(f"{where}: {error}")


def _check_codes(where: str, codes: Any) -> None:
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


def check_device_import(where: str, statement: str, root: Optional[Path]) -> None:
    """``from MODULE import NAME`` must name a module of the project (or an
    importable one) that binds NAME; found by looking at files, never importing."""
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
                return  # a namespace package or an extension: nothing to read
            continue
        try:
            tree = ast.parse(found.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            return  # torchport reports that file itself
        if name in _module_names(tree):
            return
        raise ConfigError(f"{where}: {found} does not define {name!r}")
    where_looked = f"in {root}" if root is not None else "here"
    raise ConfigError(
        f"{where}: module {module!r} not found {where_looked} nor on sys.path;"
        " the rewritten code would fail with ModuleNotFoundError"
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


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


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
        except (OSError, ValueError, SyntaxError):
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
        dependencies = _toml().load(handle).get("project", {}).get("dependencies", [])
    return [d for d in dependencies if isinstance(d, str)]


def _setup_cfg_requirements(path: Path) -> List[str]:
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
        value = parser.get("options", "install_requires", fallback="")
    except configparser.Error as error:
        raise ValueError(str(error)) from None
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


def _codes(flag: str, value: Any) -> Optional[List[str]]:
    """Codes from a flag given once ("TP1,TP2") or repeated (a tuple); they add up."""
    if value is None or value == ():
        return None
    values = [value] if isinstance(value, str) else list(value)
    codes = [c.strip() for v in values for c in v.split(",") if c.strip()]
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
    select += _codes("extend-select", flags.get("extend-select")) or []
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
    else:
        project = root if root is not None else _project_root(paths)
        declared = declared_torch(project) if project else None
        if declared:
            target, target_source = declared

    device_name = pick("device-name", "DEVICE")
    if flags.get("device-name") is not None:
        check_device_name("--device-name", device_name)
    if table.get("device-import"):
        check_device_import(
            f"{pyproject}: tool.torchport.device-import", table["device-import"], root
        )

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
    if pick("format", True):
        _check_black_config(paths)
    return Settings(
        options,
        bool(pick("format", True)),
        exclude_globs(
            root, [*table.get("exclude", []), *table.get("extend-exclude", [])]
        ),
        root,
        target_source,
        per_file,
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


def _check_black_config(paths: List[str]) -> None:
    """A bad ``[tool.black]`` value is one configuration error, not one per file."""
    from codemod.rewrite.formatting import BlackConfigError, black_config, black_mode

    first = Path(os.path.realpath(paths[0] if paths and paths[0] != "-" else "."))
    if black_config(first) is None:
        return  # black's defaults: nothing to check, and no need to import black
    try:
        black_mode(first)
    except BlackConfigError as error:
        raise ConfigError(str(error)) from None
