"""Which paths a run processes: the walk of the folders given (``walk``: the files
git would list, found without running git), and every rule that leaves a path out
(VCS, virtualenv and build folders, git's ignore files, and the ``exclude`` /
``extend-exclude`` globs: ``ignore``).

One home for those rules, so that a folder walk, a file named on the command line
and a file read from stdin are decided the same way. Each file found carries its
real path (``Found.real``), with no symbolic link on the way: the folders of that
path are what processing pins (``pinned``).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

from codemod.run.ignore import Globs, exclude_globs
from codemod.run.io import FILE_KINDS, os_reason
from codemod.run.walk import Walk

__all__ = [  # Globs and exclude_globs are the configuration's
    "EXTENSIONS",
    "FileList",
    "Found",
    "Globs",
    "PATH_LIMIT",
    "discover",
    "exclude_globs",
    "files_to_process",
    "found",
]

EXTENSIONS = (".py", ".ipynb")  # what the command line processes

try:  # the longest path the system takes, with its terminating NUL
    PATH_LIMIT = os.pathconf("/", "PC_PATH_MAX")
except (OSError, ValueError, AttributeError):
    PATH_LIMIT = 4096


class Found(type(Path())):  # type: ignore[misc]
    """A path discovery found (as the user named it or the walk reached it), with
    ``real``: where it is, no symbolic link on the way."""

    real: str

    def __reduce__(self):
        return found, (str(self), self.real)


def found(path, real: str) -> Found:
    made = Found(path)
    made.real = real
    return made


class FileList(list):
    """The files found, in order; ``skipped``: (folder, files in it) for each
    folder a default exclude left out (``walk``)."""

    skipped: List[Tuple[Path, int]]

    def __init__(self, files=(), skipped=()) -> None:
        super().__init__(files)
        self.skipped = list(skipped)

    def skipped_files(self) -> int:
        return sum(count for _, count in self.skipped)


# -- discovery ----------------------------------------------------------------------
def files_to_process(paths: Sequence[str], exclude) -> Tuple[List[Path], List[str]]:
    """What the command line processes: folders walked as git lists them, and
    ``exclude`` applied to named files too (as pre-commit names them)."""
    files, errors = discover(paths, exclude=exclude, extensions=EXTENSIONS)
    if exclude is not None:
        files = FileList([f for f in files if not exclude(f, False)], files.skipped)
    return files, errors


def discover(
    paths: Sequence[str], exclude=None, extensions: Tuple[str, ...] = (".py",)
) -> Tuple[FileList, List[str]]:
    """Files to process, in a stable order, and error lines for bad paths.

    Folders are walked for ``extensions`` (``walk``), without following symbolic
    links, skipping VCS and virtualenv folders, build output and what git ignores.
    A file named explicitly is always taken; when it is a symbolic link, or named
    through a linked folder (``ld/v.py``), its real path must lie inside the
    current folder or a folder named, and that is what is processed.
    ``exclude(path, is_dir)`` filters more.
    """
    files = FileList()
    errors: List[str] = []
    seen = set()
    roots = [os.path.realpath(".")]
    roots += [os.path.realpath(raw) for raw in paths if _is_dir(raw)]

    def add(path: Path) -> None:
        if path.real not in seen:
            seen.add(path.real)
            files.append(path)

    for raw in paths:
        problem = _too_long(os.path.abspath(raw))
        if problem is not None:
            errors.append(f"{raw}: {problem}; not processed")
            continue
        try:
            info = os.stat(raw)
        except OSError as error:
            errors.append(f"{raw}: {_not_a_file(raw, error)}")
            continue
        if stat.S_ISDIR(info.st_mode):
            walk = Walk(exclude, extensions, _entries, errors)
            for path in _walked(walk, Path(raw), errors):
                add(path)
            files.skipped += walk.skipped
        elif not stat.S_ISREG(info.st_mode):
            errors.append(f"{raw}: {_not_a_file(raw)}")
        else:
            named = _named_file(raw, roots)
            if isinstance(named, str):
                errors.append(f"{raw}: {named}")
            else:
                add(named)
    return files, errors


def _is_dir(raw: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(raw).st_mode)
    except (OSError, ValueError):
        return False


def _named_file(raw: str, roots: List[str]):
    """The file named ``raw`` (a regular file once links are followed) as it is
    processed, or why it is not: through a symbolic link, its real path must lie
    inside one of ``roots``, and the real path is what is processed."""
    real = os.path.realpath(raw)
    direct = os.path.normpath(os.path.join(roots[0], raw))  # as written, no link
    if real == direct:
        return found(raw, real)
    if any(_inside(real, root) for root in roots):
        shown = os.path.relpath(real) if _inside(real, roots[0]) else real
        return found(shown, real)
    if os.path.islink(raw):
        return f"symbolic link to {real}, outside the paths given; not followed"
    return (
        f"named through a linked folder; its real path {real} is outside the paths"
        " given; not followed"
    )


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _too_long(real: str) -> Optional[str]:
    """Why the path ``real`` cannot be processed for its length, if it cannot."""
    size = len(os.fsencode(real))
    if size < PATH_LIMIT:
        return None
    return (
        f"path longer than the system allows ({size:,} bytes; at most"
        f" {PATH_LIMIT - 1:,})"
    )


def _not_a_file(raw: str, error: Optional[OSError] = None) -> str:
    """Why ``raw``, neither a folder nor a regular file, cannot be processed."""
    link = os.path.islink(raw)
    try:
        if error is not None:
            raise error
        mode = os.stat(raw).st_mode
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "symbolic link loop"
        if error.errno == errno.ENOENT:
            return "broken symbolic link" if link else "no such file or directory"
        return f"cannot read: {os_reason(error)}"
    kind = FILE_KINDS.get(stat.S_IFMT(mode), "something else")
    return f"not a regular file ({'symbolic link to ' if link else ''}{kind})"


# -- the walk -----------------------------------------------------------------------
def _walked(walk: Walk, root: Path, errors: List[str]) -> Iterator[Found]:
    """Each file ``walk`` finds under ``root``, with its real path; an error line
    for one whose path the system does not take."""
    for child, real in walk.files(root):
        problem = _too_long(str(real))
        if problem is not None:
            errors.append(f"{child}: {problem}; not processed")
        else:
            yield found(child, str(real))


def _entries(here: Path, real: Path, errors: List[str]) -> List[Tuple[str, str]]:
    """(name, "folder" | "file" | "other") of each entry of the folder ``here``, by
    name; nothing, and an error line, when it cannot be read or entered."""
    problem = _too_long(str(real))
    if problem is not None:
        errors.append(f"{here}: {problem}; folder not searched")
        return []
    try:
        with os.scandir(here) as listing:
            entries = sorted((entry.name, _kind(entry)) for entry in listing)
    except OSError as error:
        where = error.filename or here
        errors.append(f"{where}: cannot read folder: {os_reason(error)}")
        return []
    if entries:  # listed; entered only with the search bit (the kernel decides)
        longest = max((name for name, _ in entries), key=len)
        problem = _too_long(str(real / longest))
        if problem is not None:  # a path in it that the system does not take
            errors.append(f"{here}: {problem} inside it; folder not searched")
            return []
        try:
            os.lstat(here / longest)
        except FileNotFoundError:  # removed since it was listed
            pass
        except OSError as error:
            errors.append(f"{here}: cannot enter folder: {os_reason(error)}")
            return []
    return entries


def _kind(entry: os.DirEntry) -> str:
    """ "folder", "file" (regular) or "other", never following a link."""
    try:
        if entry.is_dir(follow_symlinks=False):
            return "folder"
        return "file" if entry.is_file(follow_symlinks=False) else "other"
    except OSError:  # the walk reports the folder it cannot enter
        return "other"
