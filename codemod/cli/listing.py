"""The files of a folder as git sees them: inside a git work tree, what
``git ls-files --cached --others --exclude-standard`` lists (tracked files, and
untracked ones no ignore rule covers, with every ignore source git has:
``.gitignore`` files, ``.git/info/exclude``, ``core.excludesFile``); outside one,
or where git cannot answer, the walk of ``files`` (pathspec's gitignore rules).

The rules torchport adds to git's are applied alike either way: the ``.py`` and
``.ipynb`` files only, no symbolic link, nothing in a VCS, virtualenv or build
folder, and the ``exclude`` callable of the configuration. Nested repositories and
submodules are listed by their own git. Files come back in the order the walk
gives (a folder's files, then its subfolders, each by name).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from codemod.run.files import EXTENSIONS, SKIPPED_DIRS

# git is given this long; past it (an ignore file that is a named pipe makes git
# wait for ever) the folder is walked instead.
GIT_TIMEOUT_S = 10.0
_UNREADABLE = re.compile(r"could not open directory '(.*)': (.*)")
Exclude = Optional[Callable[[Path, bool], bool]]


def files_to_process(
    paths: Sequence[str], exclude: Exclude
) -> Tuple[List[Path], List[str]]:
    """What the command line processes: each folder listed by git where it is in a
    work tree (else walked), each file named taken as ``files.discover`` takes it,
    ``exclude`` applied to both; and an error line for each path that cannot be."""
    from codemod.run import files as walk

    found: List[Path] = []
    errors: List[str] = []
    seen: set = set()
    pending: List[str] = []  # paths for the walk, kept in the order given

    def add(paths_found: Sequence[Path]) -> None:
        for path in paths_found:
            key = os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                found.append(path)

    def flush() -> None:
        if pending:
            walked, problems = walk.files_to_process(list(pending), exclude)
            add(walked)
            errors.extend(problems)
            pending.clear()

    for raw in paths:
        listed = git_files(Path(raw), exclude, errors) if _is_dir(raw) else None
        if listed is None:
            pending.append(raw)
        else:
            flush()
            add(listed)
    flush()
    return found, errors


def _is_dir(raw: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(raw).st_mode)
    except (OSError, ValueError):
        return False


def git_files(
    folder: Path, exclude: Exclude = None, errors: Optional[List[str]] = None
) -> Optional[List[Path]]:
    """The files under ``folder`` to process, as git lists them; None when
    ``folder`` is in no git work tree, or git is missing, fails or hangs. Folders
    git could not read are added to ``errors``."""
    listed = _ls_files(folder)
    if listed is None:
        return None
    names, unreadable = listed
    if errors is not None:
        errors += [
            f"{folder / name}: cannot read folder: {why}" for name, why in unreadable
        ]
    keep = _Filter(folder, exclude)
    found: List[Path] = []
    for name in names:
        path = folder / name.rstrip("/")
        if not keep.directory_kept(path.parent):
            continue
        if name.endswith("/") or keep.is_folder(path):
            # A nested repository or a submodule: its own git lists its files.
            if keep.directory_kept(path):
                found += git_files(path, exclude, errors) or []
        elif keep.file_kept(path):
            found.append(path)
    found.sort(key=lambda p: _walk_order(p, folder))
    return found


def _ls_files(folder: Path) -> Optional[Tuple[List[str], List[Tuple[str, str]]]]:
    """The names git lists under ``folder`` (relative to it), and the folders it
    could not read with the reason; None when git does not answer."""
    if not _safe_to_ask_git(folder):
        return None
    command = ["git", "-C", str(folder), "ls-files", "-z"]
    command += ["--cached", "--others", "--exclude-standard"]
    try:
        proc = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if proc.returncode != 0:
        return None
    names = [os.fsdecode(n) for n in proc.stdout.split(b"\0") if n]
    unreadable = []
    for line in os.fsdecode(proc.stderr).splitlines():
        match = _UNREADABLE.search(line)
        if match:
            why = match.group(2)
            unreadable.append((match.group(1).rstrip("/"), why[:1].upper() + why[1:]))
    return list(dict.fromkeys(names)), unreadable  # an unmerged file: once a stage


def _safe_to_ask_git(folder: Path) -> bool:
    """False when the repository's ``.git/info/exclude`` is there but is no regular
    file: git would wait for ever on a named pipe, or read a device to its end."""
    try:
        start = folder.resolve()
    except (OSError, RuntimeError):
        return False
    for directory in [start, *start.parents]:
        try:
            if not (directory / ".git").exists():
                continue
            exclude = directory / ".git" / "info" / "exclude"
            return not os.path.lexists(exclude) or exclude.is_file()
        except OSError:
            return False
    return False  # no repository: nothing for git to list


def _walk_order(path: Path, root: Path) -> Tuple:
    """The walk's order: a folder's files by name, then its subfolders by name."""
    parts = path.relative_to(root).parts
    return tuple((1, part) for part in parts[:-1]) + ((0, parts[-1]),)


class _Filter:
    """torchport's own rules over what git lists, answered once per folder."""

    def __init__(self, root: Path, exclude: Exclude) -> None:
        self.exclude = exclude
        self.folders: Dict[Path, bool] = {root: True}

    def directory_kept(self, directory: Path) -> bool:
        kept = self.folders.get(directory)
        if kept is None:
            kept = self.directory_kept(directory.parent) and self._folder_ok(directory)
            self.folders[directory] = kept
        return kept

    def _folder_ok(self, directory: Path) -> bool:
        name = directory.name
        if name in SKIPPED_DIRS or name.endswith(".egg-info"):
            return False
        try:
            if directory.is_symlink() or (directory / "pyvenv.cfg").is_file():
                return False
        except OSError:
            return False
        return self.exclude is None or not self.exclude(directory, True)

    def file_kept(self, path: Path) -> bool:
        if not path.name.endswith(EXTENSIONS):
            return False
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return False  # deleted, but still in the index
        if not stat.S_ISREG(mode):
            return False  # a symbolic link, or a submodule
        return self.exclude is None or not self.exclude(path, False)

    @staticmethod
    def is_folder(path: Path) -> bool:
        try:
            return stat.S_ISDIR(os.lstat(path).st_mode)
        except OSError:
            return False
