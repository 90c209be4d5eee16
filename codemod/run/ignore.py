"""The rules that leave a path out of a run: gitignore-style patterns (``exclude`` /
``extend-exclude``), the ``.gitignore`` files of a folder walk, and
``.git/info/exclude``.

Ignore files are read with ``io.read_bounded``: a named pipe is never opened for a
writer that never comes, a link to ``/dev/zero`` is never read to the end, and a
file over ``IGNORE_FILE_LIMIT`` is not taken for an ignore file. One that cannot
be read is an error line; the walk goes on without it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, List, Optional, Tuple

from codemod.run.io import os_reason, read_bounded

IGNORE_FILE_LIMIT = 1 << 20  # bytes of an ignore file; more is not an ignore file


class Globs:
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
        self.spec()  # first: a pattern pathspec refuses fails whatever the path
        try:
            relative = Path(os.path.abspath(path)).relative_to(self.root)
        except ValueError:
            try:
                relative = path.resolve().relative_to(self.root)
            except ValueError:
                return False
        return self.match(relative.as_posix(), is_dir)

    def match(self, relative: str, is_dir: bool) -> bool:
        """Whether the path ``relative`` (to ``root``, POSIX) is matched."""
        return self.spec().match_file(relative + "/" if is_dir else relative)

    def spec(self):
        """The patterns compiled (pathspec is imported only where there are any)."""
        if self._spec is None:
            import pathspec

            self._spec = pathspec.GitIgnoreSpec.from_lines(self.patterns)
        return self._spec


def exclude_globs(root: Optional[Path], patterns: List[str]) -> Optional[Globs]:
    """``patterns`` relative to ``root`` as an exclude callable; None when there is
    nothing to exclude."""
    if not patterns or root is None:
        return None
    return Globs(root, patterns)


def read_ignore_file(path: Path) -> Tuple[Optional[List[str]], Optional[str]]:
    """The lines of an ignore file, or None and the error line when it exists but
    cannot be read (None, None when there is none)."""
    try:
        data = read_bounded(path, IGNORE_FILE_LIMIT)
    except FileNotFoundError:
        return None, None
    except OSError as error:
        return None, f"{path}: {os_reason(error)}; not read as an ignore file"
    return data.decode("utf-8", errors="replace").splitlines(), None


def git_info_exclude(paths: Iterable[str], errors: List[str]) -> Optional[Globs]:
    """The patterns of ``.git/info/exclude`` of the repository holding ``paths``:
    git ignores them like .gitignore, so folder walks skip them too. An exclude
    file that cannot be read adds its error line to ``errors``."""
    for raw in list(paths)[:1]:
        try:
            root = repository(Path(raw).resolve())
        except (OSError, RuntimeError):  # a path too long, a link loop
            return None
        if root is None:
            return None
        lines, error = read_ignore_file(root / ".git" / "info" / "exclude")
        if error is not None:
            errors.append(error)
        return exclude_globs(root, [line for line in lines or [] if line.strip()])
    return None


def either(*excludes):
    """One exclude callable from several (None entries skipped)."""
    present = [e for e in excludes if e is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    return _Either(present)


class _Either:
    def __init__(self, excludes) -> None:
        self.excludes = excludes

    def __call__(self, path: Path, is_dir: bool = False) -> bool:
        return any(e(path, is_dir) for e in self.excludes)


def repository(start: Path) -> Optional[Path]:
    """The nearest folder at or above ``start`` that holds ``.git``."""
    return next((d for d in [start, *start.parents] if _exists(d / ".git")), None)


def _exists(path: Path) -> bool:
    return os.path.exists(path)  # False too where torchport may not look


def gitignores(directory: Path, errors: List[str]) -> List[Globs]:
    """The .gitignore files that apply inside ``directory``, from the repo root down."""
    chain = [directory, *directory.parents]
    root = repository(directory)
    chain = chain[: chain.index(root) + 1] if root is not None else [directory]
    found = (load_gitignore(base, errors) for base in reversed(chain))
    return [globs for globs in found if globs is not None]


def load_gitignore(base: Path, errors: List[str]) -> Optional[Globs]:
    """The patterns of ``base/.gitignore`` (None when there is none, or it cannot
    be read: then its error line is added to ``errors``)."""
    lines, error = read_ignore_file(base / ".gitignore")
    if error is not None:
        errors.append(error)
    if lines is None:
        return None
    gitignore = Globs(base, lines)
    gitignore.spec()  # a pattern pathspec refuses fails as the file is read
    return gitignore


def ignored(path: Path, is_dir: bool, found: List[Globs]) -> bool:
    for globs in found:
        try:
            relative = path.relative_to(globs.root).as_posix()
        except ValueError:
            continue
        if globs.match(relative, is_dir):
            return True
    return False
