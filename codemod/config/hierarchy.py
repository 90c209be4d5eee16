"""Each file's configuration, found as Ruff finds it: the nearest pyproject.toml
with a ``[tool.torchport]`` table at or above the file's folder applies, whatever
else the run was given (a file gets the same findings alone, in a pre-commit
batch, or in a whole-tree run); a pyproject.toml without the table is passed
over; files under none get the defaults. Command-line flags win over every file.

The target torch a file's project declares is read in its own project (the
nearest folder with a pyproject.toml, setup.cfg, setup.py or requirements.txt),
so each package of a monorepo keeps its own. Each answer is kept per folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from codemod.config.pyproject import ConfigError
from codemod.config.settings import Settings, resolve_settings
from codemod.config.table import checked_table, configures_torchport
from codemod.run.files import exclude_globs

# The files whose folder is a project's (and declares its torch).
PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "requirements.txt")


class Configurations:
    """The settings of every file of a run (flags merged over each file's
    ``[tool.torchport]``), and the ``exclude`` that applies to each path."""

    def __init__(self, flags: Dict[str, Any]) -> None:
        self.flags = flags
        self._real: Dict[str, Path] = {}  # folder as given -> its real path
        self._config: Dict[Path, Optional[Path]] = {}  # folder -> its pyproject
        self._project: Dict[Path, Optional[Path]] = {}  # folder -> project folder
        self._settings: Dict[Tuple[Optional[Path], Optional[Path]], Settings] = {}
        self._excludes: Dict[Optional[Path], Any] = {}

    # -- lookups, one per folder --------------------------------------------------
    def folder(self, path: Path) -> Path:
        """The real folder that holds ``path`` (a file, or a folder being entered)."""
        given = os.path.dirname(os.path.abspath(path))
        real = self._real.get(given)
        if real is None:
            real = self._real[given] = Path(os.path.realpath(given))
        return real

    def config_of(self, folder: Path) -> Optional[Path]:
        """The pyproject.toml whose ``[tool.torchport]`` applies in ``folder``."""
        return _nearest(self._config, folder, _config_in)

    def project_of(self, folder: Path) -> Optional[Path]:
        """The nearest folder at or above ``folder`` that holds a project file."""
        return _nearest(self._project, folder, _project_in)

    # -- what the run asks --------------------------------------------------------
    def settings_for(self, path: Path) -> Settings:
        """The settings of the file ``path`` (ConfigError for a bad file)."""
        folder = self.folder(path)
        config = self.config_of(folder)
        project = self.project_of(folder)
        key = (config, project)
        if key not in self._settings:
            self._settings[key] = resolve_settings(config, project, self.flags, path)
        return self._settings[key]

    def exclude(self, path: Path, is_dir: bool = False) -> bool:
        """Whether ``path`` is excluded by the configuration of the folder it is
        in (ConfigError for a bad configuration file met on the way)."""
        config = self.config_of(self.folder(path))
        if config not in self._excludes:
            table = (checked_table(config) or {}) if config else {}
            patterns = [*table.get("exclude", []), *table.get("extend-exclude", [])]
            self._excludes[config] = exclude_globs(
                config.parent if config else None, patterns
            )
        excluded = self._excludes[config]
        return excluded is not None and excluded(path, is_dir)

    def groups(self, files: Sequence[Path]) -> List[Tuple[Settings, List[int]]]:
        """The files by the settings they share (indices into ``files``, in order);
        the settings of every group are resolved, and checked, here."""
        grouped: Dict[int, Tuple[Settings, List[int]]] = {}
        for index, path in enumerate(files):
            settings = self.settings_for(path)
            grouped.setdefault(id(settings), (settings, []))[1].append(index)
        return list(grouped.values())

    def all_settings(self) -> List[Settings]:
        return list(self._settings.values())


def _nearest(cache: Dict[Path, Optional[Path]], folder: Path, find) -> Optional[Path]:
    """``find(folder)``, else the answer for its parent; each folder asked once."""
    if folder not in cache:
        found = find(folder)
        if found is None and folder.parent != folder:
            found = _nearest(cache, folder.parent, find)
        cache[folder] = found
    return cache[folder]


def _config_in(folder: Path) -> Optional[Path]:
    candidate = folder / "pyproject.toml"
    return candidate if configures_torchport(candidate) else None


def _project_in(folder: Path) -> Optional[Path]:
    return folder if any(_is_file(folder / name) for name in PROJECT_FILES) else None


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


__all__ = ["Configurations", "ConfigError"]
