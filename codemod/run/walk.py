"""The walk of one folder: the files ``git ls-files --cached --others
--exclude-standard`` would list there, found without running git.

Every path comes from the walk itself: folders are listed one by one, no symbolic
link is entered, and each file carries the real path processing pins
(``pinned``). What git knows (``repository``) only decides: a file the index
tracks is taken even where an ignore rule covers it, and a folder holding tracked
files is entered for them; a path in the index that names nothing the walk finds
(``../outside/x.py``, ``/etc/x.py``, a folder turned into a link) is never used.
A nested repository or a submodule starts over with its own index and ignore files.

Besides git's rules, torchport's defaults: VCS folders, virtualenvs and the build
and cache folders of ``DEFAULT_EXCLUDES`` are skipped, unless the folder is a
Python package (``mmengine/dist/__init__.py``) or holds files git tracks. The
files a default skipped are counted (``Walk.skipped``), so that the run can say so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Tuple

from codemod.run import repository
from codemod.run.ignore import Globs, ignored, load_gitignore, load_ignore_file

VCS_DIRS = {".git", ".hg", ".svn"}  # never entered, never counted
DEFAULT_EXCLUDES = {
    ".tox",
    ".nox",
    ".venv",
    "venv",
    "__pycache__",
    "build",
    "dist",
    "node_modules",
    ".eggs",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "site-packages",
}
WALK, ONLY_TRACKED, SKIP = "walk", "only tracked", "skip"
Entries = Callable[[Path, Path, List[str]], List[Tuple[str, str]]]


@dataclass(frozen=True)
class _Scope:
    """What applies inside one folder of the walk."""

    repo: Optional[repository.Repository]
    relative: str  # the folder's path from the repository's top, POSIX ("" there)
    rules: Tuple[Globs, ...]  # ignore files, lowest precedence first
    only_tracked: bool  # the folder is ignored: only the files git tracks count

    def child(self, name: str) -> str:
        return f"{self.relative}/{name}" if self.relative else name

    def tracks(self, relative: str) -> bool:
        return self.repo is not None and self.repo.tracks(relative)

    def tracks_inside(self, relative: str) -> bool:
        return self.repo is not None and self.repo.tracks_inside(relative)


class Walk:
    """Walks folders for the files to process (``files``); ``skipped`` holds
    (folder, files in it) for each folder a default exclude left out."""

    def __init__(self, exclude, extensions, entries: Entries, errors: List[str]):
        self.exclude = exclude
        self.extensions = extensions
        self.entries = entries  # the listing of a folder (files._entries)
        self.errors = errors
        self.skipped: List[Tuple[Path, int]] = []

    def files(self, root: Path) -> Iterator[Tuple[Path, Path]]:
        """(path, real path) of each file found under ``root``, folders first to
        last in name order, each folder's files before its subfolders."""
        root_real = Path(os.path.realpath(root))
        stack = [(root, root_real, self._start(root_real))]
        while stack:
            here, real_here, scope = stack.pop()
            entries = self.entries(here, real_here, self.errors)
            names = {name for name, _ in entries}
            if here != root and ".git" in names:
                scope = self._repository_scope(real_here)
            elif here != root and ".gitignore" in names and not scope.only_tracked:
                local = load_gitignore(real_here, self.errors)
                if local is not None:
                    scope = _Scope(
                        scope.repo, scope.relative, scope.rules + (local,), False
                    )
            folders = []
            for name, kind in entries:
                child, real = here / name, real_here / name
                relative = scope.child(name)
                if kind == "folder":
                    decided = self._folder(child, real, relative, scope)
                    if decided != SKIP:
                        inner = _Scope(
                            scope.repo, relative, scope.rules, decided == ONLY_TRACKED
                        )
                        folders.append((child, real, inner))
                elif kind == "file" and name.endswith(self.extensions):
                    if not scope.tracks(relative):
                        if scope.only_tracked or ignored(real, False, scope.rules):
                            continue
                    if self.exclude is None or not self.exclude(child, False):
                        yield child, real
            stack.extend(reversed(folders))

    def _start(self, root_real: Path) -> _Scope:
        """The scope of the folder the walk starts in: its repository's ignore
        files, and each .gitignore from the repository's top down to it."""
        repo = repository.find(root_real)
        if repo is None:
            local = load_gitignore(root_real, self.errors)
            return _Scope(None, "", (local,) if local is not None else (), False)
        rules = list(self._tree_rules(repo))
        chain = [root_real, *root_real.parents]
        for folder in reversed(chain[: chain.index(repo.top) + 1]):
            local = load_gitignore(folder, self.errors)
            if local is not None:
                rules.append(local)
        relative = root_real.relative_to(repo.top).as_posix()
        return _Scope(repo, "" if relative == "." else relative, tuple(rules), False)

    def _repository_scope(self, top: Path) -> _Scope:
        repo = repository.at(top)
        rules = list(self._tree_rules(repo))
        local = load_gitignore(top, self.errors)
        if local is not None:
            rules.append(local)
        return _Scope(repo, "", tuple(rules), False)

    def _tree_rules(self, repo: repository.Repository) -> Iterator[Globs]:
        for path, own in repo.ignore_files():
            globs = load_ignore_file(path, repo.top, self.errors if own else [])
            if globs is not None:
                yield globs

    def _folder(self, child: Path, real: Path, relative: str, scope: _Scope) -> str:
        """Whether the walk enters the folder ``child``, and for what."""
        if child.name in VCS_DIRS:
            return SKIP
        if self.exclude is not None and self.exclude(child, True):
            return SKIP
        tracked_inside = scope.tracks_inside(relative)
        if scope.only_tracked or ignored(real, True, scope.rules):
            return ONLY_TRACKED if tracked_inside else SKIP
        if not _excluded_by_default(real):
            return WALK
        if _is_file(real / "__init__.py"):
            return WALK  # a package named like build output is a package
        if tracked_inside:
            return ONLY_TRACKED
        count = count_files(real, self.extensions)
        if count:
            self.skipped.append((child, count))
        return SKIP


def _excluded_by_default(folder: Path) -> bool:
    name = folder.name
    if name in DEFAULT_EXCLUDES or name.endswith(".egg-info"):
        return True
    return _is_file(folder / "pyvenv.cfg")  # a virtualenv


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # unreadable: the walk reports it when it gets there
        return False


def count_files(folder: Path, extensions) -> int:
    """The files with one of ``extensions`` under ``folder`` (no link followed, VCS
    folders left out, folders that cannot be read passed over)."""
    count, stack = 0, [folder]
    while stack:
        try:
            with os.scandir(stack.pop()) as listing:
                for entry in listing:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if entry.name not in VCS_DIRS:
                                stack.append(Path(entry.path))
                        elif entry.name.endswith(extensions) and entry.is_file(
                            follow_symlinks=False
                        ):
                            count += 1
                    except OSError:
                        continue
        except OSError:
            continue
    return count
