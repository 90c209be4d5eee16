"""What a rewritten file keeps of the one it replaces besides its bytes: owner and
group, extended attributes (POSIX ACLs among them), and mode, set in that order on
the new file before it is renamed over the old one; and the file-system flags
(``chattr +a`` / ``+i``) that forbid the replacement, checked before anything is
written.

The order matters: ``chown`` clears setuid and setgid (and file capabilities), so
the owner comes first and the mode last; an ACL is an extended attribute whose
mask the mode's group bits then set to what they were.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from typing import List, Optional

# From <linux/fs.h>: FS_IOC_GETFLAGS, and the flags that forbid renaming over a
# file (immutable) or removing an entry of a folder (append-only, immutable).
_FS_IOC_GETFLAGS = 0x80086601
_FS_IMMUTABLE_FL = 0x10
_FS_APPEND_FL = 0x20
_UNSUPPORTED = {errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOTTY, errno.EINVAL}


class MetadataError(Exception):
    """The new file cannot get what the old one had; ``str()`` says what."""


def forbidding_flags(fd: int) -> Optional[str]:
    """The flag of the file or folder open as ``fd`` (not an ``O_PATH`` descriptor)
    that forbids replacing it: "append-only: chattr +a" or "immutable: chattr +i";
    None for neither, or where flags cannot be read."""
    if not sys.platform.startswith("linux"):
        return None
    import fcntl

    try:
        raw = fcntl.ioctl(fd, _FS_IOC_GETFLAGS, bytes(8))
    except OSError:
        return None
    flags = int.from_bytes(raw[:4], sys.byteorder)
    if flags & _FS_IMMUTABLE_FL:
        return "immutable: chattr +i"
    if flags & _FS_APPEND_FL:
        return "append-only: chattr +a"
    return None


def keep(source_fd: int, target_fd: int, before: os.stat_result) -> None:
    """Give the new file ``target_fd`` the owner, group, extended attributes and
    mode of ``source_fd`` (whose stat at read time is ``before``). Raises
    ``MetadataError`` when one of them cannot be kept."""
    _owner(target_fd, before)
    _extended_attributes(source_fd, target_fd)
    mode = stat.S_IMODE(before.st_mode)
    os.fchmod(target_fd, mode)
    now = os.fstat(target_fd)
    if stat.S_IMODE(now.st_mode) != mode:
        raise MetadataError(f"cannot keep its mode {mode:o}")


def _owner(target_fd: int, before: os.stat_result) -> None:
    if not hasattr(os, "fchown"):
        return
    now = os.fstat(target_fd)
    if (now.st_uid, now.st_gid) == (before.st_uid, before.st_gid):
        return
    try:
        os.fchown(target_fd, before.st_uid, before.st_gid)
    except OSError as error:
        owner = "owner" if now.st_uid != before.st_uid else "group"
        raise MetadataError(
            f"cannot keep its {owner} (uid {before.st_uid}, gid {before.st_gid}):"
            f" {error.strerror}"
        ) from None


def _names(fd: int) -> List[str]:
    try:
        return os.listxattr(fd)
    except OSError as error:
        if error.errno in _UNSUPPORTED:
            return []
        raise


def _extended_attributes(source_fd: int, target_fd: int) -> None:
    """The new file gets exactly the old one's extended attributes (an ACL the
    folder's default ACL gave it is removed where the old file had none)."""
    if not hasattr(os, "listxattr"):
        return
    wanted = {name: os.getxattr(source_fd, name) for name in _names(source_fd)}
    for name in _names(target_fd):
        if name not in wanted:
            try:
                os.removexattr(target_fd, name)
            except OSError:  # a label the system sets (security.selinux): kept
                pass
    for name, value in wanted.items():
        try:
            os.setxattr(target_fd, name, value)
        except OSError as error:
            try:
                same = os.getxattr(target_fd, name) == value
            except OSError:
                same = False
            if not same:
                raise MetadataError(
                    f"cannot keep its extended attribute {name}: {error.strerror}"
                ) from None
