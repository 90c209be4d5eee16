"""A rewritten file keeps its owner, its setuid and setgid bits, its extended
attributes and its POSIX ACLs, as Ruff keeps them: the new file gets them before it
is renamed over the old one (owner first: chown clears setuid and setgid)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess

import pytest

from tests.bytes_helpers import CUDA
from tests.cli_helpers import run_cli


def _other_user():
    import pwd

    for name in ("nobody", "daemon"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    pytest.skip("no other user to own the file")


@pytest.mark.skipif(os.geteuid() != 0, reason="only root gives a file to another user")
def test_another_users_setuid_file_keeps_owner_and_mode(tmp_path):
    account = _other_user()
    target = tmp_path / "tool.py"
    target.write_text(CUDA)
    os.chown(target, account.pw_uid, account.pw_gid)
    mode = stat.S_ISUID | stat.S_ISGID | 0o755
    os.chmod(target, mode)
    proc = run_cli(["tool.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    info = os.stat(target)
    assert ".to(_DEVICE())" in target.read_text()
    assert (info.st_uid, info.st_gid) == (account.pw_uid, account.pw_gid)
    assert oct(stat.S_IMODE(info.st_mode)) == oct(mode)


def _xattrs_work(path) -> bool:
    try:
        os.setxattr(path, "user.torchport-probe", b"1")
        os.removexattr(path, "user.torchport-probe")
        return True
    except OSError:
        return False


def test_extended_attributes_are_kept(tmp_path):
    setfattr, getfattr = shutil.which("setfattr"), shutil.which("getfattr")
    if setfattr is None or getfattr is None:
        pytest.skip("setfattr/getfattr not installed (apt-get install attr)")
    target = tmp_path / "train.py"
    target.write_text(CUDA)
    if not _xattrs_work(target):
        pytest.skip("this file system has no user extended attributes")
    subprocess.run(
        [setfattr, "-n", "user.origin", "-v", "labelled by hand", str(target)],
        check=True,
    )
    subprocess.run(
        [setfattr, "-n", "user.binary", "-v", "0x00ff10", str(target)], check=True
    )
    proc = run_cli(["train.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ".to(_DEVICE())" in target.read_text()
    shown = subprocess.run(
        [getfattr, "--absolute-names", "-d", "-e", "hex", str(target)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "user.origin=0x6c6162656c6c65642062792068616e64" in shown, shown
    assert "user.binary=0x00ff10" in shown, shown


def _setfacl(*args) -> str:
    """Run setfacl with ``args`` (the last a path); getfacl's path. Skips where
    the tools are missing or the file system takes no ACL."""
    setfacl, getfacl = shutil.which("setfacl"), shutil.which("getfacl")
    if setfacl is None or getfacl is None:
        pytest.skip("setfacl/getfacl not installed (apt-get install acl)")
    done = subprocess.run([setfacl, *map(str, args)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"this file system takes no ACL: {done.stderr.strip()}")
    return getfacl


def test_posix_acls_are_kept(tmp_path):
    account = _other_user()
    target = tmp_path / "train.py"
    target.write_text(CUDA)
    getfacl = _setfacl("-m", f"u:{account.pw_name}:rw,m::rw", target)

    def acl() -> str:
        return subprocess.run(
            [getfacl, "--omit-header", "--numeric", str(target)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    before, mode = acl(), stat.S_IMODE(os.stat(target).st_mode)
    assert f"user:{account.pw_uid}:rw-" in before
    proc = run_cli(["train.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ".to(_DEVICE())" in target.read_text()
    assert acl() == before
    assert stat.S_IMODE(os.stat(target).st_mode) == mode


def test_a_default_acl_of_the_folder_is_not_added_to_a_file_that_had_none(tmp_path):
    """The new file is created in the folder, which may give it the folder's
    default ACL: the rewritten file has exactly the old one's (none)."""
    account = _other_user()
    target = tmp_path / "train.py"
    target.write_text(CUDA)
    getfacl = _setfacl("-d", "-m", f"u:{account.pw_name}:rwx", tmp_path)
    assert "system.posix_acl_access" not in os.listxattr(target)
    proc = run_cli(["train.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ".to(_DEVICE())" in target.read_text()
    assert "system.posix_acl_access" not in os.listxattr(target)
    shown = subprocess.run(
        [getfacl, "--omit-header", str(target)], capture_output=True, text=True
    ).stdout
    assert account.pw_name not in shown, shown
