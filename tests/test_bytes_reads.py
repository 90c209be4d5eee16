"""Every ignore and configuration file torchport reads is read with a bound, and
never blocks: a named pipe (no writer ever comes) and a link to /dev/zero (it never
ends) are refused at once, with a line saying why."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bytes_helpers import CUDA, HANG_GUARD_S, environment, error_lines


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


MAKERS = {"fifo": _fifo, "dev-zero": _zero}


def _run(args, cwd: Path) -> subprocess.CompletedProcess:
    """The command line under a hang guard (the old code never returned) and a
    memory cap (the old code read /dev/zero until MemoryError)."""

    try:
        return subprocess.run(
            [sys.executable, "-m", "codemod", *args],
            cwd=cwd,
            env=environment(),
            capture_output=True,
            text=True,
            timeout=HANG_GUARD_S,
            preexec_fn=_memory_cap,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("torchport blocked reading an ignore file")


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_git_info_exclude_that_never_ends_is_one_line(tmp_path, kind):
    (tmp_path / ".git" / "info").mkdir(parents=True)
    MAKERS[kind](tmp_path / ".git" / "info" / "exclude")
    (tmp_path / "a.py").write_text(CUDA)
    proc = _run(["."], tmp_path)
    assert proc.returncode == 2, proc.stderr
    reason = {
        "fifo": "not a regular file (a named pipe)",
        "dev-zero": "not a regular file (a character device)",
    }[kind]
    assert error_lines(proc.stderr) == [
        f"{tmp_path / '.git' / 'info' / 'exclude'}: {reason}; not read as an ignore"
        " file"
    ]
    assert ".to(_DEVICE())" in (tmp_path / "a.py").read_text()


def test_gitignore_that_never_ends_is_one_line(tmp_path):
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "sub" / ".gitignore")
    (tmp_path / "sub" / "a.py").write_text(CUDA)
    proc = _run(["."], tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert error_lines(proc.stderr) == [
        f"{tmp_path / 'sub' / '.gitignore'}: not a regular file (a named pipe); not"
        " read as an ignore file"
    ]
    assert ".to(_DEVICE())" in (tmp_path / "sub" / "a.py").read_text()


def test_an_ignore_file_over_the_bound_is_not_read(tmp_path):
    from codemod.run.ignore import IGNORE_FILE_LIMIT

    (tmp_path / ".gitignore").write_text("a.py\n" * (IGNORE_FILE_LIMIT // 5 + 1))
    (tmp_path / "a.py").write_text(CUDA)
    proc = _run(["."], tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert error_lines(proc.stderr) == [
        f"{tmp_path / '.gitignore'}: larger than {IGNORE_FILE_LIMIT:,} bytes; not"
        " read as an ignore file"
    ]


# Each reader of a configuration file, given the path in argv[1]: it must refuse
# the file at once, with an OSError or a ConfigError saying "not a regular file".
READERS = """
import sys
from codemod.config import requirements
from codemod.config.pyproject import ConfigError, read_table
path, name = sys.argv[1], sys.argv[2]
readers = {
    "pyproject.toml": [read_table, requirements._pyproject_requirements],
    "setup.cfg": [requirements._setup_cfg_requirements],
    "setup.py": [requirements._setup_py_requirements],
    "requirements.txt": [requirements._requirements_txt],
}[name]
for reader in readers:
    try:
        reader(path)
    except (OSError, ConfigError) as error:
        assert "not a regular file" in str(error), repr(error)
    else:
        raise AssertionError(f"{reader.__name__} read it")
"""


@pytest.mark.parametrize("kind", sorted(MAKERS))
@pytest.mark.parametrize(
    "name", ["pyproject.toml", "setup.cfg", "setup.py", "requirements.txt"]
)
def test_configuration_files_that_never_end_are_refused(tmp_path, kind, name):
    """The readers of each configuration file, given one that is a pipe or
    /dev/zero (as a swap between torchport's is_file() check and its read makes
    it): refused at once. In a process of its own, under the hang guard and a
    memory cap: reading /dev/zero to the end would take all the machine's memory."""
    path = tmp_path / name
    MAKERS[kind](path)
    proc = _run_python(READERS, str(path), name)
    assert proc.returncode == 0, proc.stderr


def _run_python(code: str, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            env=environment(),
            capture_output=True,
            text=True,
            timeout=HANG_GUARD_S,
            preexec_fn=_memory_cap,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("a configuration reader blocked")


def _memory_cap() -> None:
    import resource

    limit = 4 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_read_bounded_reads_up_to_its_limit(tmp_path):
    from codemod.run.io import read_bounded

    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_bounded(path, 10) == b"x" * 10
    with pytest.raises(OSError, match="larger than 9 bytes"):
        read_bounded(path, 9)
