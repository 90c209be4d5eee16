"""The tests of the project a run belongs to, read for patches even when only the
library is named (``torchport fix pkg``).

A test that patches ``pkg.utils.torch.cuda.device_count``, or ``torch.cuda.device_count``
itself, reaches calls in ``pkg``: ported without a look at the tests, they would no
longer reach the patch. The project's root is the nearest folder at or above the
paths given that holds a ``pyproject.toml``, ``setup.cfg``, ``setup.py``,
``pytest.ini``, ``tox.ini`` or ``.git``; its tests are pytest's ``testpaths``, the
``tests``/``test`` folders and every ``test_*.py`` / ``*_test.py`` / ``conftest.py``
under it, walked with the run's own exclusion rules. They are read, never ported.
"""

from __future__ import annotations

import configparser
import os
import re
from pathlib import Path
from typing import List, Optional, Sequence

MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", "pytest.ini", "tox.ini", ".git")
TEST_FOLDERS = ("tests", "test")
TEST_FILE = re.compile(r"(?:test_\w*|\w*_test|conftest)\.py")
MOST_FILES = 20000  # a walk past this many files is not a project's tests


def project_root(paths: Sequence[str]) -> Optional[Path]:
    """The nearest folder at or above the folder holding every path that marks
    a project, or None (a path outside any project, or paths in several)."""
    if not paths:
        return None
    real = [os.path.realpath(p) for p in paths]
    common = Path(os.path.commonpath(real))
    folder = common if common.is_dir() else common.parent
    for candidate in (folder, *folder.parents):
        if any((candidate / marker).exists() for marker in MARKERS):
            return None if candidate == Path(candidate.anchor) else candidate
    return None


def testpaths(root: Path) -> List[str]:
    """pytest's ``testpaths`` as the project configures it, else the usual folders."""
    found: List[str] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = _toml().loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeError, ValueError, ImportError):
            data = {}
        tool = data.get("tool", {}).get("pytest", {})
        for table in (tool.get("ini_options", {}), tool):
            value = table.get("testpaths") if isinstance(table, dict) else None
            if isinstance(value, str):
                value = value.split()
            if isinstance(value, list):
                found += [v for v in value if isinstance(v, str)]
    for name, section in (
        ("pytest.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
        ("tox.ini", "pytest"),
    ):
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(root / name, encoding="utf-8")
        except (configparser.Error, UnicodeError):
            continue
        if parser.has_option(section, "testpaths"):
            found += parser.get(section, "testpaths").split()
    return found or [f for f in TEST_FOLDERS if (root / f).is_dir()]


def _toml():
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore
    return tomllib


def project_tests(paths: Sequence[str], files: Sequence[Path], exclude) -> List[Path]:
    """The project's test files that are not among the run's ``files``."""
    root = project_root(paths)
    if root is None:
        return []
    from codemod.run.files import files_to_process

    shown = _shown(root)
    folders = [shown / p for p in testpaths(root)]
    walked, _ = files_to_process([str(shown)], exclude)
    if len(walked) > MOST_FILES:
        walked = []
    inside = [str(f) for f in folders if f.is_dir()]
    taken, _ = files_to_process(inside, exclude) if inside else ([], [])
    taken += [f for f in walked if TEST_FILE.fullmatch(f.name)]
    ours = {os.path.realpath(f) for f in files}
    tests: List[Path] = []
    for path in taken:
        real = os.path.realpath(path)
        if path.suffix == ".py" and real not in ours:
            ours.add(real)
            tests.append(path)
    return tests


def _shown(root: Path) -> Path:
    """The root as the run shows paths: relative to the current folder if inside it."""
    here = os.path.realpath(".")
    if str(root) == here:
        return Path(".")
    if str(root).startswith(here + os.sep):
        return Path(os.path.relpath(root, here))
    return root
