"""Which paths a run processes: the walk of the folders given, and every rule that
leaves a path out (VCS, virtualenv and build folders, ``.gitignore``,
``.git/info/exclude``, and the ``exclude`` / ``extend-exclude`` globs).

One home for those rules, so that a folder walk, a file named on the command line
and a file read from stdin are decided the same way.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple

from codemod.run.io import FILE_KINDS, NotRegularError, os_reason, read_regular

EXTENSIONS = (".py", ".ipynb")  # what the command line processes

SKIPPED_DIRS = {
    ".git",
    ".hg",
    ".svn",
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
IGNORE_FILE_LIMIT = 1 << 20  # bytes of a .gitignore read; more is not an ignore file


# -- gitignore-style patterns -------------------------------------------------------
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


def git_info_exclude(paths: Iterable[str]) -> Optional[Globs]:
    """The patterns of ``.git/info/exclude`` of the repository holding ``paths``:
    git ignores them like .gitignore, so folder walks skip them too."""
    for raw in list(paths)[:1]:
        root = _repository(Path(raw).resolve())
        if root is None:
            return None
        try:
            lines = (root / ".git" / "info" / "exclude").read_text(
                encoding="utf-8", errors="replace"
            )
        except OSError:
            return None
        return exclude_globs(
            root, [line for line in lines.splitlines() if line.strip()]
        )
    return None


def _either(*excludes):
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


def _repository(start: Path) -> Optional[Path]:
    """The nearest folder at or above ``start`` that holds ``.git``."""
    return next((d for d in [start, *start.parents] if _exists(d / ".git")), None)


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # a folder torchport may not look into
        return False


def _gitignores(directory: Path) -> List[Globs]:
    """The .gitignore files that apply inside ``directory``, from the repo root down."""
    chain = [directory, *directory.parents]
    root = _repository(directory)
    chain = chain[: chain.index(root) + 1] if root is not None else [directory]
    found = (_load_gitignore(base) for base in reversed(chain))
    return [globs for globs in found if globs is not None]


def _load_gitignore(base: Path) -> Optional[Globs]:
    """The patterns of ``base/.gitignore``, read only if it is a regular file (a named
    pipe would block, a link to /dev/zero would never end), up to a size cap."""
    try:
        data, _ = read_regular(base / ".gitignore", follow=True)
    except (OSError, NotRegularError):
        return None
    text = data[:IGNORE_FILE_LIMIT].decode("utf-8", errors="replace")
    gitignore = Globs(base, text.splitlines())
    gitignore.spec()  # a pattern pathspec refuses fails as the file is read
    return gitignore


def _ignored(path: Path, is_dir: bool, gitignores: List[Globs]) -> bool:
    for globs in gitignores:
        try:
            relative = path.relative_to(globs.root).as_posix()
        except ValueError:
            continue
        if globs.match(relative, is_dir):
            return True
    return False


def _is_virtualenv(directory: Path) -> bool:
    try:
        return (directory / "pyvenv.cfg").is_file()
    except OSError:  # unreadable: the walk reports it when it gets there
        return False


# -- discovery ----------------------------------------------------------------------
def files_to_process(paths: Sequence[str], exclude) -> Tuple[List[Path], List[str]]:
    """What the command line processes: folders walked, .gitignore and
    .git/info/exclude honoured, and ``exclude`` applied to named files too (as
    pre-commit names them)."""
    walk_exclude = _either(exclude, git_info_exclude(paths))
    files, errors = discover(paths, exclude=walk_exclude, extensions=EXTENSIONS)
    if exclude is not None:
        files = [f for f in files if not exclude(f, False)]
    return files, errors


def discover(
    paths: Sequence[str], exclude=None, extensions: Tuple[str, ...] = (".py",)
) -> Tuple[List[Path], List[str]]:
    """Files to process, in a stable order, and error lines for bad paths.

    Folders are walked for ``extensions``, without following symbolic links,
    skipping VCS and virtualenv folders, build output and what .gitignore ignores.
    A file named explicitly is always taken; when it is a symbolic link, its target
    must lie inside the current folder or a folder named, and the target is what is
    processed. ``exclude(path, is_dir)`` filters more.
    """
    files: List[Path] = []
    errors: List[str] = []
    seen = set()
    roots = [os.path.realpath(".")]
    roots += [os.path.realpath(raw) for raw in paths if os.path.isdir(raw)]

    def add(path: Path, key: Optional[str] = None) -> None:
        key = key or os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            files.append(path)

    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for found, real in _walk(path, exclude, extensions, errors):
                add(found, real)
        elif path.is_file() and not path.is_symlink():
            add(path)
        elif path.is_file():
            target = os.path.realpath(path)
            if not any(_inside(target, root) for root in roots):
                errors.append(
                    f"{raw}: symbolic link to {target}, outside the paths given;"
                    " not followed"
                )
            else:
                add(
                    Path(
                        os.path.relpath(target) if _inside(target, roots[0]) else target
                    )
                )
        else:
            errors.append(f"{raw}: {_not_a_file(raw)}")
    return files, errors


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _not_a_file(raw: str) -> str:
    """Why ``raw``, neither a folder nor a regular file, cannot be processed."""
    link = os.path.islink(raw)
    try:
        mode = os.stat(raw).st_mode
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "symbolic link loop"
        if error.errno == errno.ENOENT:
            return "broken symbolic link" if link else "no such file or directory"
        return f"cannot read: {os_reason(error)}"
    kind = FILE_KINDS.get(stat.S_IFMT(mode), "something else")
    return f"not a regular file ({'symbolic link to ' if link else ''}{kind})"


def _walk(
    root: Path, exclude, extensions, errors: List[str]
) -> Iterator[Tuple[Path, str]]:
    """Each file found, and its real path (no link is followed on the way)."""
    root_resolved = root.resolve()
    gitignores = _gitignores(root_resolved)

    def unreadable(error: OSError) -> None:
        errors.append(f"{error.filename}: cannot read folder: {os_reason(error)}")

    for directory, subdirs, names in os.walk(
        root, followlinks=False, onerror=unreadable
    ):
        here = Path(directory)
        resolved_here = root_resolved / here.relative_to(root)
        local = _load_gitignore(resolved_here) if here != root else None
        if local is not None:
            gitignores = gitignores + [local]

        subdirs[:] = [
            name
            for name in sorted(subdirs)
            if name not in SKIPPED_DIRS
            and not name.endswith(".egg-info")
            and _kept(here / name, resolved_here / name, True, gitignores, exclude)
        ]
        for name in sorted(names):
            child, resolved = here / name, resolved_here / name
            if name.endswith(extensions) and _kept(
                child, resolved, False, gitignores, exclude
            ):
                yield child, str(resolved)


def _kept(child: Path, resolved: Path, is_dir: bool, gitignores, exclude) -> bool:
    """Whether the walk takes ``child`` (a folder to enter, or a file), once its
    name has passed: never a symbolic link, a virtualenv, or what is ignored."""
    if child.is_symlink():
        return False
    if _is_virtualenv(child) if is_dir else not child.is_file():
        return False
    if _ignored(resolved, is_dir, gitignores):
        return False
    return exclude is None or not exclude(child, is_dir)
