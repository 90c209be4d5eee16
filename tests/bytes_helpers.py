"""What the byte-safety tests share: hashes of every file of a folder, torchport
started under a wrapper that makes an event happen at a chosen moment, and a way to
run it as a user without root's power over files."""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import pytest

from tests.cli_helpers import ROOT, record_lines

CUDA = "import torch\n\nx = torch.ones(2).cuda()\n"
HANG_GUARD_S = 300  # bounds on a hang only, never on speed
TEST_USER = "torchport-test"


def hashes(folder: Path) -> Dict[str, Tuple[str, str]]:
    """Every entry under ``folder`` (links not followed): its kind, and the hash of
    a file's bytes or a link's target."""
    found = {}
    for directory, folders, names in os.walk(folder):
        for name in folders + names:
            path = os.path.join(directory, name)
            key = os.path.relpath(path, folder)
            if os.path.islink(path):
                found[key] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                found[key] = ("folder", "")
            elif os.path.isfile(path):
                with open(path, "rb") as handle:
                    found[key] = ("file", hashlib.sha256(handle.read()).hexdigest())
            else:
                found[key] = ("other", "")
    return found


def environment(**extra: str) -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8", **extra)


# torchport's command line, with a hook run once at a moment the test names:
# HOOK_AT is "discovered" (after the walk, before any file is read) or "rewritten"
# (a file's new text is ready, nothing written yet); HOOK is Python code run then.
WRAPPER = """
import os, sys
from codemod.run import files, process
module, name = {"discovered": (files, "files_to_process"),
                "rewritten": (process, "process_source")}[os.environ["HOOK_AT"]]
real = getattr(module, name)
def hooked(*args, **kwargs):
    value = real(*args, **kwargs)
    exec(os.environ["HOOK"])
    return value
setattr(module, name, hooked)
import codemod.cli.commands as commands  # it holds files_to_process by name
if hasattr(commands, name):
    setattr(commands, name, hooked)
from codemod.cli import main
sys.argv[0] = "torchport"
main()
"""


def run_with_hook(
    args: Sequence[str], cwd: Path, at: str, hook: str, prefix: Sequence[str] = ()
) -> subprocess.CompletedProcess:
    """The command line with ``hook`` run ``at`` its moment (``WRAPPER``), under
    ``prefix`` (``normal_user()``'s, say); the output comes back as text."""
    proc = subprocess.run(
        [*prefix, sys.executable, "-c", WRAPPER, *args],
        cwd=cwd,
        env=environment(HOOK_AT=at, HOOK=hook),
        capture_output=True,
        timeout=HANG_GUARD_S,
    )
    proc.stdout = proc.stdout.decode("utf-8", "replace")
    proc.stderr = proc.stderr.decode("utf-8", "replace")
    return proc


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD_S
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what} (hang guard)"
        time.sleep(0.02)


def error_lines(stderr: str) -> List[str]:
    """The error lines of a run: every line of stderr but the summary and the next
    steps after it."""
    return record_lines(stderr)


# -- a user without root's power over files -----------------------------------------
def normal_user() -> Tuple[List[str], int, int]:
    """A command prefix that runs a program as a user to whom file permissions
    apply, and that user's uid and gid (the tree it works on must be theirs).

    Not root: nothing to do. As root: a real unprivileged user (created if need be)
    when it can run this interpreter; where the interpreter lives out of its reach
    (under /root), root itself without the capabilities that bypass permissions
    (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER), which the kernel then
    checks like any user's."""
    if os.geteuid() != 0:
        return [], os.geteuid(), os.getegid()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("as root without setpriv, no process can give up root's powers")
    account = _test_user()
    if account is not None:
        prefix = [
            setpriv,
            f"--reuid={account.pw_uid}",
            f"--regid={account.pw_gid}",
            "--clear-groups",
        ]
        probe = subprocess.run(
            [*prefix, sys.executable, "-c", "import codemod, libcst, click"],
            env=environment(),
            cwd="/",
            capture_output=True,
        )
        if probe.returncode == 0:
            return prefix, account.pw_uid, account.pw_gid
    dropped = "-dac_override,-dac_read_search,-fowner"
    return [setpriv, f"--bounding-set={dropped}"], 0, 0


def _test_user() -> Optional[pwd.struct_passwd]:
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        pass
    useradd = shutil.which("useradd")
    if useradd is None:
        return None
    subprocess.run(
        [useradd, "--system", "--no-create-home", "--shell", "/bin/false", TEST_USER],
        capture_output=True,
    )
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        return None


def chown_tree(folder: Path, uid: int, gid: int) -> None:
    for directory, folders, names in os.walk(folder):
        for path in [directory] + [os.path.join(directory, n) for n in names]:
            try:
                os.chown(path, uid, gid, follow_symlinks=False)
            except OSError:  # a path too long for the system: left to root
                pass
