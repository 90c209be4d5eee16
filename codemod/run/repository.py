"""What git knows about a work tree, read as data: no git program is run.

A repository is untrusted input: its ``.git/config`` can name programs that git
runs on its own (``core.fsmonitor``, hooks, filters), and ``GIT_*`` variables can
point git elsewhere. So torchport runs no git at all. It reads:

- ``.git``: a folder, or a file ``gitdir: <path>`` (a linked work tree, a
  submodule), and that git folder's ``commondir`` (where a linked work tree's
  configuration and ``info/exclude`` live). A pointer that leads nowhere is no
  repository data: the folder is walked as if it had none.
- the **index** (``index``, git's documented binary format, versions 2 to 4, SHA-1
  or SHA-256): which files are tracked. Its paths are only ever compared with the
  paths the walk finds, so a path in it that leads out of the tree (``../x``, an
  absolute path) names nothing.
- the ignore files: ``info/exclude``, and ``core.excludesFile`` as git finds it (the
  repository's ``config``, then the user's ``~/.gitconfig`` and
  ``$XDG_CONFIG_HOME/git/config``; else ``$XDG_CONFIG_HOME/git/ignore``). Only
  that key and ``extensions.objectFormat`` are read; ``include`` directives and
  the system-wide configuration are not followed. ``GIT_DIR``,
  ``GIT_INDEX_FILE`` and the other ``GIT_*`` variables are ignored.

Every file is read with ``io.read_bounded``: a named pipe, a device or an
oversized file is no repository data. An index that cannot be read or parsed is
as good as none (the walk's rules still apply).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Tuple

from codemod.run.io import read_bounded

INDEX_LIMIT = 256 << 20  # bytes of an index; a larger one is not read
_POINTER_LIMIT = 4096  # bytes of a ``.git`` file or a ``commondir``
_REGULAR, _LINK, _GITLINK = 0o100000, 0o120000, 0o160000


class Repository:
    """The git data of the work tree whose top is ``top`` (a real path)."""

    def __init__(self, top: Path, git_dir: Optional[Path]) -> None:
        self.top = top
        self.git_dir = git_dir
        common = _common_dir(git_dir) if git_dir is not None else None
        config = _config(common / "config") if common is not None else {}
        self.excludes_file = _excludes_file(config)
        self.info_exclude = common / "info" / "exclude" if common else None
        hash_size = 32 if config.get("extensions.objectformat") == "sha256" else 20
        self.tracked, self.tracked_folders = _tracked(git_dir, hash_size)

    def ignore_files(self) -> List[Tuple[Path, bool]]:
        """The ignore files that apply across the whole tree, lowest precedence
        first (``core.excludesFile``, then ``info/exclude``), each with whether
        it belongs to the tree: the user's own that cannot be read is passed over
        in silence, as git does."""
        found = [(self.excludes_file, False), (self.info_exclude, True)]
        return [(path, own) for path, own in found if path is not None]

    def tracks(self, relative: str) -> bool:
        """Whether git tracks the file ``relative`` (POSIX, from ``top``)."""
        return relative in self.tracked

    def tracks_inside(self, relative: str) -> bool:
        """Whether git tracks a file inside the folder ``relative``."""
        return relative in self.tracked_folders


def find(start: Path) -> Optional[Repository]:
    """The repository of the nearest folder at or above ``start`` (a real path)
    that holds ``.git``; None when there is none."""
    for folder in [start, *start.parents]:
        if os.path.lexists(folder / ".git"):
            return at(folder)
    return None


def at(top: Path) -> Repository:
    """The repository whose work tree's top is ``top`` (it holds ``.git``)."""
    return Repository(top, git_dir_of(top))


def git_dir_of(top: Path) -> Optional[Path]:
    """The git folder of the work tree ``top``: ``.git`` itself, or where its
    ``gitdir:`` line points; None when that is no folder."""
    dot_git = top / ".git"
    if os.path.isdir(dot_git):
        return dot_git
    pointed = _pointer(dot_git, "gitdir:")
    if pointed is None:
        return None
    git_dir = (top / pointed) if not os.path.isabs(pointed) else Path(pointed)
    return git_dir if os.path.isdir(git_dir) else None


def _pointer(path: Path, prefix: str = "") -> Optional[str]:
    """The path a one-line pointer file holds (after ``prefix``), if it holds one."""
    try:
        text = read_bounded(path, _POINTER_LIMIT).decode("utf-8", "surrogateescape")
    except (OSError, ValueError):
        return None
    line = text.splitlines()[0].strip() if text.strip() else ""
    if not line.startswith(prefix):
        return None
    value = line[len(prefix) :].strip()
    return value if value and "\0" not in value else None


def _common_dir(git_dir: Path) -> Path:
    """Where the configuration and ``info/exclude`` of ``git_dir`` live."""
    common = _pointer(git_dir / "commondir")
    if common is None:
        return git_dir
    found = git_dir / common if not os.path.isabs(common) else Path(common)
    return found if os.path.isdir(found) else git_dir


# -- configuration --------------------------------------------------------------------
def _config(path: Path) -> Dict[str, str]:
    """``section.key`` (lower case; subsections dropped) -> value, last one wins, of
    the git configuration file ``path`` ({} when it cannot be read)."""
    try:
        text = read_bounded(path).decode("utf-8", "surrogateescape")
    except (OSError, ValueError):
        return {}
    values: Dict[str, str] = {}
    section = ""
    lines = iter(text.splitlines())
    for line in lines:
        line = line.strip()
        if line.startswith("["):
            header, _, line = line[1:].partition("]")
            section = header.split('"')[0].strip().lower()
            line = line.strip()
        if not line or line[0] in "#;":
            continue
        key, equals, raw = line.partition("=")
        while raw.endswith("\\") and not raw.endswith("\\\\"):  # continued
            raw = raw[:-1] + next(lines, "")
        key = key.strip().lower()
        if key.isidentifier() or key.replace("-", "").isalnum():
            values[f"{section}.{key}"] = _value(raw) if equals else "true"
    return values


def _value(raw: str) -> str:
    """A git configuration value: quotes removed, escapes resolved, a comment
    outside quotes dropped, outer blanks stripped."""
    out: List[str] = []
    quoted = False
    index = 0
    while index < len(raw):
        char = raw[index]
        if char == "\\" and index + 1 < len(raw):
            index += 1
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(raw[index], raw[index]))
        elif char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        index += 1
    return "".join(out).strip()


def _excludes_file(repository_config: Dict[str, str]) -> Optional[Path]:
    """``core.excludesFile`` as git resolves it (see the module), ``~`` expanded."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    value = None
    for config in (
        _config(Path(xdg) / "git" / "config"),
        _config(Path(home) / ".gitconfig"),
        repository_config,
    ):
        value = config.get("core.excludesfile", value)
    if value is None:
        return Path(xdg) / "git" / "ignore"
    if not value:
        return None
    return Path(os.path.expanduser(value))


# -- the index ------------------------------------------------------------------------
def _tracked(
    git_dir: Optional[Path], hash_size: int
) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The tracked files (regular files and links) and the folders holding any
    (submodules among them), as POSIX paths from the top; empty when the index
    cannot be read."""
    if git_dir is None:
        return frozenset(), frozenset()
    try:
        entries = read_index(read_bounded(git_dir / "index", INDEX_LIMIT), hash_size)
    except (OSError, ValueError):
        return frozenset(), frozenset()
    files, folders = set(), set()
    for path, mode in entries:
        kind = mode & 0o170000
        if kind in (_REGULAR, _LINK):
            files.add(path)
        elif kind == _GITLINK:
            folders.add(path)
        else:
            continue
        folder = path.rpartition("/")[0]
        while folder and folder not in folders:
            folders.add(folder)
            folder = folder.rpartition("/")[0]
    return frozenset(files), frozenset(folders)


def read_index(data: bytes, hash_size: int = 20) -> List[Tuple[str, int]]:
    """(path, mode) of each entry of a git index (``gitformat-index(5)``), the
    path as the file system names it (``os.fsdecode``). Raises ValueError when
    ``data`` is no index of a version this reads."""
    if len(data) < 12 or data[:4] != b"DIRC":
        raise ValueError("not a git index")
    version, count = struct.unpack(">II", data[4:12])
    if version not in (2, 3, 4):
        raise ValueError(f"index version {version}")
    fixed = 40 + hash_size + 2  # stat data, mode among it; object name; flags
    entries: List[Tuple[str, int]] = []
    offset, previous = 12, b""
    for _ in range(count):
        if offset + fixed > len(data):
            raise ValueError("index entry past the end")
        (mode,) = struct.unpack(">I", data[offset + 24 : offset + 28])
        (flags,) = struct.unpack(">H", data[offset + fixed - 2 : offset + fixed])
        name_at = offset + fixed + (2 if version >= 3 and flags & 0x4000 else 0)
        if version == 4:
            strip, name_at = _varint(data, name_at)
            if strip > len(previous):
                raise ValueError("index path prefix longer than the last path")
        end = data.find(b"\0", name_at)
        if end < 0:
            raise ValueError("index path without its end")
        if version == 4:
            name = previous[: len(previous) - strip] + data[name_at:end]
            offset = end + 1
        else:
            name = data[name_at:end]
            offset += (end - offset) // 8 * 8 + 8  # 1 to 8 NULs pad to 8 bytes
        previous = name
        entries.append((os.fsdecode(name), mode))
    return entries


def _varint(data: bytes, at: int) -> Tuple[int, int]:
    """git's offset varint at ``at``: its value, and where it ends."""
    value = -1
    while True:
        if at >= len(data):
            raise ValueError("index varint past the end")
        byte = data[at]
        at += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at
