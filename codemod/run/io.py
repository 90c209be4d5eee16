"""Reading a file torchport may rewrite, and writing it back atomically.

A file is read only while it is a regular file (never through a symbolic link,
never blocking on a named pipe), decoded only when its bytes round-trip, and
replaced only when it is still exactly what was read. Ignore and configuration
files are read with the same care, and only up to a size (``read_bounded``).
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
from codemod.run.lifetime import STOP_SIGNALS, block, unblock

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
    pass


class ReadOnlyError(Exception):
    """``str(error)`` says what is read-only: "file" or "folder"."""


TEMP_SUFFIX = ".torchport~"  # temporary files: ".<name>.<random>.torchport~"
TEMP_NAME_CHARS = 40  # of the file's name in the temporary name (names max 255 bytes)
_WRITE_BITS = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


def _identity(info: os.stat_result) -> Tuple[int, int, int, int]:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def write_atomic(
    path: Path, data: bytes, original: bytes, before: os.stat_result
) -> None:
    """Replace ``path`` with ``data`` atomically, keeping mode and owner.

    The new bytes go to a temporary file beside the original, are flushed to disk,
    then renamed over it. Right before the rename the file must still be the one
    read (same device, inode, size, mtime and bytes, not a symbolic link), else it
    is not replaced (``FileChangedError``); an advisory lock on it keeps two
    torchport runs from both replacing it. A read-only file or folder (no write
    bit) is never written, even by root.
    SIGINT and SIGTERM wait until the temporary file is renamed or removed; after
    SIGKILL a ``.<name>.XXXX.torchport~`` file may be left, never a ``.py``.
    """
    if not before.st_mode & _WRITE_BITS:
        raise ReadOnlyError("file")
    folder = os.path.dirname(path) or "."
    if not os.stat(folder).st_mode & _WRITE_BITS:
        raise ReadOnlyError("folder")
    blocked = block(STOP_SIGNALS)
    try:
        import tempfile  # only when a file is written

        fd, temp = tempfile.mkstemp(
            prefix=f".{path.name[:TEMP_NAME_CHARS]}.", suffix=TEMP_SUFFIX, dir=folder
        )
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temp, stat.S_IMODE(before.st_mode))
            if hasattr(os, "chown") and os.geteuid() == 0:
                try:
                    os.chown(temp, before.st_uid, before.st_gid)
                except OSError:
                    pass
            _replace_if_unchanged(temp, path, original, before)
        except BaseException:
            try:
                os.unlink(temp)
            except OSError:
                pass
            raise
    finally:
        unblock(blocked)


def _replace_if_unchanged(
    temp: str, path: Path, original: bytes, before: os.stat_result
) -> None:
    """Rename ``temp`` over ``path`` if ``path`` is still what was read.

    What remains is the time between the last ``lstat`` and the rename (a few
    microseconds; scripts/concurrent_edits.py measures it): a write by a program
    that takes no lock landing then is lost.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:  # gone, or swapped for a symbolic link
        raise FileChangedError() from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # another torchport run is replacing it right now
                raise FileChangedError() from None
        if _identity(os.fstat(fd)) != _identity(before):
            raise FileChangedError()
        with open(fd, "rb", closefd=False) as handle:
            if handle.read() != original:
                raise FileChangedError()
        if _identity(os.lstat(path)) != _identity(before):
            raise FileChangedError()
        os.replace(temp, path)
    finally:
        os.close(fd)  # releases the lock
