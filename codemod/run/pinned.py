"""The folder a file is read from and written to, pinned: reached from ``/`` one
component at a time, never through a symbolic link.

Discovery records each file's real path (no link on the way, or only links that
stay inside the paths given). Processing opens every folder of that path relative
to the one above it with ``O_NOFOLLOW | O_DIRECTORY``, so a folder swapped for a
link after discovery (a ``git checkout`` that turns ``sub/`` into a link to
``../outside``) makes the open fail instead of leading out of the tree. The file is
then read, its replacement created and renamed, all relative to the pinned folder;
right before the rename the path is walked again and must still lead to it.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Optional, Union

# O_PATH (Linux) needs no read permission on the folder, only search permission
# on the way: a folder that can be entered but not listed still pins.
_FOLDER_FLAGS = (
    getattr(os, "O_PATH", os.O_RDONLY)
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
PINNING = {os.open, os.rename, os.unlink, os.stat} <= os.supports_dir_fd


class LinkOnTheWay(Exception):
    """A folder on the way to a file is a symbolic link (or no folder) now; its
    message is that folder's path."""


def real_path(path: Union[str, Path]) -> str:
    """Where ``path`` is: the real path discovery recorded for it, else its folder
    resolved now (links in the folders followed, the file's own name kept)."""
    recorded: Optional[str] = getattr(path, "real", None)
    if recorded is not None:
        return recorded
    absolute = os.path.abspath(path)
    folder, name = os.path.split(absolute)
    return os.path.join(os.path.realpath(folder), name)


class Folder:
    """An open folder, reached without following any link, and the name of the
    file in it (``name``); ``fd`` is None where the platform has no ``*at`` calls
    (then names are paths, and only the file's own link is refused)."""

    def __init__(self, path: Union[str, Path]) -> None:
        real = real_path(path)
        self.path, self.name = os.path.split(real)
        self.fd: Optional[int] = open_folder(self.path) if PINNING else None

    def __enter__(self) -> "Folder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def at(self) -> dict:
        """Keyword arguments that make a call on ``entry(name)`` relative to this
        folder."""
        return {"dir_fd": self.fd} if self.fd is not None else {}

    def entry(self, name: str) -> str:
        """``name`` as the ``*at`` calls take it (a path where there are none)."""
        return name if self.fd is not None else os.path.join(self.path, name)

    def stat(self) -> os.stat_result:
        return os.stat(self.path) if self.fd is None else os.fstat(self.fd)

    def still_there(self) -> bool:
        """Whether its path, walked again from ``/`` without following links,
        still leads to this folder (and not to one swapped in since)."""
        if self.fd is None:
            return True
        try:
            fd = open_folder(self.path)
        except (OSError, LinkOnTheWay):
            return False
        try:
            now, pinned = os.fstat(fd), os.fstat(self.fd)
        finally:
            os.close(fd)
        return (now.st_dev, now.st_ino) == (pinned.st_dev, pinned.st_ino)


def open_folder(real: str) -> int:
    """A descriptor of the folder ``real`` (an absolute real path), opened from
    ``/`` one component at a time without following a link. Raises
    ``LinkOnTheWay`` naming the first component that is a link or no folder."""
    parts = [part for part in real.split(os.sep) if part]
    fd = os.open(os.sep, _FOLDER_FLAGS)
    try:
        for depth, part in enumerate(parts):
            try:
                child = os.open(part, _FOLDER_FLAGS, dir_fd=fd)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise LinkOnTheWay(os.sep + os.sep.join(parts[: depth + 1]))
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd
