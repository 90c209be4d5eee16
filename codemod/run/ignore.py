"""The rules that leave a path out of a run: gitignore-style patterns (``exclude`` /
``extend-exclude``), the ``.gitignore`` files of a folder walk, ``info/exclude``
and ``core.excludesFile`` (``repository`` finds them), matched by ``wildmatch``.

Ignore files are read with ``io.read_bounded``: a named pipe is never opened for a
writer that never comes, a link to ``/dev/zero`` is never read to the end, and a
file over ``IGNORE_FILE_LIMIT`` is not taken for an ignore file. One that cannot
be read is an error line; the walk goes on without it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Tuple

from codemod.run.io import os_reason, read_bounded
from codemod.run.wildmatch import Pattern, parse_lines, path_verdict, verdict

IGNORE_FILE_LIMIT = 1 << 20  # bytes of an ignore file; more is not an ignore file


class Globs:
    """Gitignore-style patterns, matched against paths relative to ``root``, in
    time linear in the path (``wildmatch``).

    Picklable (it travels to the worker processes); compiled on first use.
    """

    def __init__(self, root: Path, patterns: Iterable[str]) -> None:
        self.root = root
        self.patterns = list(patterns)
        self._compiled: Optional[List[Pattern]] = None

    def __getstate__(self):
        return {"root": self.root, "patterns": self.patterns, "_compiled": None}

    def __call__(self, path: Path, is_dir: bool = False) -> bool:
        try:
            relative = Path(os.path.abspath(path)).relative_to(self.root)
        except ValueError:
            try:
                relative = path.resolve().relative_to(self.root)
            except ValueError:
                return False
        return self.match(relative.as_posix(), is_dir)

    def match(self, relative: str, is_dir: bool) -> bool:
        """Whether the path ``relative`` (to ``root``, POSIX), or a folder on its
        way, is matched."""
        return bool(path_verdict(self.compiled(), relative, is_dir))

    def verdict(self, parts: Sequence[str], is_dir: bool) -> Optional[bool]:
        """Ignored (True), re-included (False) or neither (None), by the last
        pattern that matches the path of ``parts`` itself."""
        return verdict(self.compiled(), parts, is_dir)

    def compiled(self) -> List[Pattern]:
        if self._compiled is None:
            self._compiled = parse_lines(self.patterns)
        return self._compiled


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


def load_ignore_file(path: Path, root: Path, errors: List[str]) -> Optional[Globs]:
    """The patterns of the ignore file ``path``, relative to ``root`` (None when
    there is none, or it cannot be read: then its error line is added to
    ``errors``)."""
    lines, error = read_ignore_file(path)
    if error is not None:
        errors.append(error)
    return Globs(root, lines) if lines else None


def load_gitignore(base: Path, errors: List[str]) -> Optional[Globs]:
    """The patterns of ``base/.gitignore`` (see ``load_ignore_file``)."""
    return load_ignore_file(base / ".gitignore", base, errors)


def ignored(path: Path, is_dir: bool, rules: Sequence[Globs]) -> bool:
    """Whether ``path`` (a real path) is ignored by ``rules`` (lowest precedence
    first, as git ranks them: ``core.excludesFile``, ``info/exclude``, then each
    ``.gitignore`` from the top down): the first, from the highest, with a pattern
    matching the path itself decides. Its folders are the walk's to decide."""
    for globs in reversed(rules):
        try:
            parts = path.relative_to(globs.root).parts
        except ValueError:
            continue
        decided = globs.verdict(parts, is_dir)
        if decided is not None:
            return decided
    return False
