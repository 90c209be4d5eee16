"""Reading a file torchport may rewrite, and writing it back atomically.

A file is read only while it is a regular file (never through a symbolic link,
never blocking on a named pipe), decoded only when its bytes round-trip, and
replaced only when it is still exactly what was read, in the folder it was read
from (``pinned``), with its owner, extended attributes and mode (``keep``).
Ignore and configuration files are read with the same care, and only up to a
size (``read_bounded``).
"""

from __future__ import annotations

import codecs
import errno
import io  # the standard library's: imports are absolute
import os
import stat
import tokenize

try:
    import fcntl
except ImportError:  # Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]
from pathlib import Path
from typing import Optional, Tuple, Union

from codemod.model.text import one_line
from codemod.run.keep import forbidding_flags, keep
from codemod.run.lifetime import STOP_SIGNALS, block, unblock
from codemod.run.pinned import Folder, LinkOnTheWay

# What a path is when it is neither a folder nor a regular file.
FILE_KINDS = {
    stat.S_IFIFO: "a named pipe",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


# -- reading ------------------------------------------------------------------------
class NotRegularError(Exception):
    """The path is no longer a regular file (swapped for a pipe, a device...)."""


# Never follow a symbolic link (one swapped in after discovery could lead out of the
# tree), never block opening a named pipe.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def read_regular(
    path: Union[str, Path], follow: bool = False, limit: Optional[int] = None, **at
) -> Tuple[bytes, os.stat_result]:
    """The bytes of ``path`` and its stat, only if it is a regular file (not through
    a symbolic link unless ``follow``), at most ``limit`` bytes of it (``None``: all
    of it). ``at`` (``dir_fd=``) makes ``path`` relative to an open folder.
    Raises ``NotRegularError`` or ``OSError``."""
    flags = _OPEN_FLAGS & ~getattr(os, "O_NOFOLLOW", 0) if follow else _OPEN_FLAGS
    fd = os.open(path, flags, **at)
    with open(fd, "rb", closefd=True) as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = FILE_KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise NotRegularError(kind)
        return handle.read() if limit is None else handle.read(limit), info


def read_pinned(path: Union[str, Path]) -> Tuple[bytes, os.stat_result]:
    """``read_regular`` of a file torchport may rewrite, through its pinned folder
    (``pinned.Folder``): no link followed on the way, not only at the end.
    Raises ``LinkOnTheWay`` as well."""
    with Folder(path) as folder:
        return read_regular(folder.entry(folder.name), **folder.at())


CONFIG_FILE_LIMIT = 16 << 20  # bytes of an ignore or configuration file


def read_bounded(path: Union[str, Path], limit: int = CONFIG_FILE_LIMIT) -> bytes:
    """The bytes of an ignore or configuration file (links followed): never
    blocking on a named pipe, never reading forever from a device (``/dev/zero``),
    never more than ``limit`` bytes. Raises ``OSError`` saying why not."""
    try:
        data, _ = read_regular(path, follow=True, limit=limit + 1)
    except NotRegularError as error:
        raise OSError(errno.EINVAL, f"not a regular file ({error})", str(path))
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit:,} bytes", str(path))
    return data


def open_bounded(path: Union[str, Path], limit: int = CONFIG_FILE_LIMIT) -> io.BytesIO:
    """``read_bounded`` as a binary file object (``with open_bounded(p) as f``)."""
    return io.BytesIO(read_bounded(path, limit))


def read_problem(error: Exception) -> str:
    """Why ``read_regular`` read nothing, as the end of an error line."""
    if isinstance(error, NotRegularError):
        return f"not a regular file ({error}); not read"
    if isinstance(error, LinkOnTheWay):
        return f"folder {error} on its path is a symbolic link now; not read"
    if isinstance(error, OSError) and error.errno == errno.ELOOP:
        return "is a symbolic link (not followed); not read"
    return f"cannot read: {os_reason(error)}"


def os_reason(error: OSError) -> str:
    return error.strerror or one_line(error)


# -- decoding -----------------------------------------------------------------------
_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


def _wide_encoding(data: bytes) -> Optional[str]:
    """ "UTF-16" or "UTF-32" for text in those encodings (by BOM, or by a NUL byte in
    every other position), else None."""
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            return name
    sample = data[:4096]
    if len(sample) >= 4 and sample.count(0) * 2 >= len(sample) - 1:
        if not sample[0::2].strip(b"\x00") or not sample[1::2].strip(b"\x00"):
            return "UTF-16 or UTF-32"
    return None


def decode(data: bytes) -> Tuple[str, str]:
    """Text and encoding of a Python source file (PEP 263 cookie and BOM honoured).

    Raises ``UnicodeError`` (with a one-line reason) when the bytes are not text in
    the declared encoding, or would not encode back to exactly the same bytes.
    """
    wide = _wide_encoding(data)
    if wide is not None:
        raise UnicodeError(
            f"{wide} text (Python reads source files as UTF-8 or an ASCII-based"
            " encoding declared on line 1 or 2)"
        )
    if b"\x00" in data:
        raise UnicodeError("binary file (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise UnicodeError(one_line(error)) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        byte = data[error.start : error.start + 1].hex()
        if encoding == "utf-8":
            reason = f"not valid UTF-8 (byte 0x{byte} on line {line})"
            reason += " and no PEP 263 coding declaration"
        else:
            reason = f"not valid {encoding}, as declared (byte 0x{byte} on line {line})"
        raise UnicodeError(reason) from None
    except LookupError:  # rot13, hex, base64, zlib...: codecs, not text encodings
        raise UnicodeError(f"{encoding!r} is not a text encoding") from None
    try:
        same = text.encode(encoding) == data
    except (UnicodeError, LookupError):
        same = False
    if not same:
        raise UnicodeError(f"{encoding} text does not encode back to the same bytes")
    return text, encoding


# -- writing ------------------------------------------------------------------------
class FileChangedError(Exception):
    """The file, or a folder on its path, is no longer what was read; ``str()`` says
    what changed when it is not the file itself."""


class ReadOnlyError(Exception):
    """``str(error)`` says what is read-only: "file" or "folder", and why."""


TEMP_SUFFIX = ".torchport~"  # temporary files: ".<name>.<random>.torchport~"
TEMP_NAME_CHARS = 40  # of the file's name in the temporary name (names max 255 bytes)
_WRITE_BITS = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
_CREATE_FLAGS = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def _identity(info: os.stat_result) -> Tuple[int, int, int, int]:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def write_atomic(
    path: Path,
    data: bytes,
    original: bytes,
    before: os.stat_result,
    folder: Optional[Folder] = None,
) -> None:
    """Replace ``path`` with ``data`` atomically, keeping owner, extended attributes
    (ACLs) and mode.

    Everything happens relative to ``folder``, the file's folder pinned when it was
    read (``pinned.Folder``; opened here when not given). The new bytes go to a
    temporary file beside the original, are flushed to disk, get the original's
    metadata (``keep``), then are renamed over it. Right before the rename the file
    must still be the one read (same device, inode, size, mtime and bytes, not a
    symbolic link) and its folder still at its path, else it is not replaced
    (``FileChangedError``); an advisory lock on it keeps two torchport runs from
    both replacing it. A read-only, append-only or immutable file or folder is
    never written, even by root (``ReadOnlyError``).
    SIGINT, SIGTERM and SIGHUP wait until the temporary file is renamed or removed;
    after SIGKILL a ``.<name>.XXXX.torchport~`` file may be left, never a ``.py``.
    """
    if not before.st_mode & _WRITE_BITS:
        raise ReadOnlyError("file")
    owned = folder is None
    if folder is None:
        try:
            folder = Folder(path)
        except LinkOnTheWay as error:
            raise FileChangedError(
                f"folder {error} on its path is a symbolic link now"
            ) from None
    try:
        _check_folder(folder)
        try:
            source = os.open(folder.entry(folder.name), _OPEN_FLAGS, **folder.at())
        except OSError:  # gone, or swapped for a symbolic link
            raise FileChangedError() from None
        try:
            _lock(source)
            flags = forbidding_flags(source)
            if flags is not None:
                raise ReadOnlyError(f"file ({flags})")
            blocked = block(STOP_SIGNALS)
            try:
                _write_beside(folder, source, data, original, before)
            finally:
                unblock(blocked)
        finally:
            os.close(source)  # releases the lock
    finally:
        if owned:
            folder.close()


def _check_folder(folder: Folder) -> None:
    if not folder.stat().st_mode & _WRITE_BITS:
        raise ReadOnlyError("folder")
    if folder.fd is None:
        return
    try:  # flags are read through a descriptor that can read the folder
        fd = os.open(".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0), dir_fd=folder.fd)
    except OSError:  # not readable: the rename says what is wrong, if anything
        return
    try:
        flags = forbidding_flags(fd)
    finally:
        os.close(fd)
    if flags is not None:  # its temporary file could be neither renamed nor removed
        raise ReadOnlyError(f"folder ({flags})")


def _lock(fd: int) -> None:
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another torchport run is replacing it right now
            raise FileChangedError() from None


def _write_beside(
    folder: Folder, source: int, data: bytes, original: bytes, before: os.stat_result
) -> None:
    """The temporary file, written and renamed over the original, or removed."""
    temp, fd = _create_temp(folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            keep(source, handle.fileno(), before)
        _replace_if_unchanged(folder, source, temp, original, before)
    except BaseException:
        try:
            os.unlink(folder.entry(temp), **folder.at())
        except OSError:
            pass
        raise


def _create_temp(folder: Folder) -> Tuple[str, int]:
    import secrets  # only when a file is written

    prefix = f".{folder.name[:TEMP_NAME_CHARS]}."
    while True:
        name = prefix + secrets.token_hex(4) + TEMP_SUFFIX
        try:
            return name, os.open(
                folder.entry(name), _CREATE_FLAGS, 0o600, **folder.at()
            )
        except FileExistsError:
            continue


def _replace_if_unchanged(
    folder: Folder, source: int, temp: str, original: bytes, before: os.stat_result
) -> None:
    """Rename ``temp`` over the file if it is still what was read (``source`` is
    open on it, locked) and its folder is still where it was.

    What remains is the time between the last ``lstat`` and the rename (a few
    microseconds; scripts/concurrent_edits.py measures it): a write by a program
    that takes no lock landing then is lost.
    """
    if _identity(os.fstat(source)) != _identity(before):
        raise FileChangedError()
    with open(source, "rb", closefd=False) as handle:
        handle.seek(0)
        if handle.read() != original:
            raise FileChangedError()
    if not folder.still_there():
        raise FileChangedError(
            f"folder {folder.path} on its path was moved or replaced while torchport"
            " was running"
        )
    name = folder.entry(folder.name)
    if _identity(os.lstat(name, **folder.at())) != _identity(before):
        raise FileChangedError()
    if folder.fd is None:
        os.replace(folder.entry(temp), name)
    else:
        os.replace(temp, folder.name, src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
