"""Parallel runs: never a mixed or empty file, the same result with any --jobs,
and bounded memory on a big tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from codemod.run import pool, process
from codemod.run.io import FileChangedError, read_regular, write_atomic
from codemod.run.job import WRITE, Job
from codemod.model.options import Options
from tests.cli_helpers import ROOT, run_cli

TEMPLATE = """import torch

x = torch.ones(4).cuda()
y = x.pin_memory()
on = x.is_cuda
where = "cuda" if torch.cuda.is_available() else "cpu"
n = 0  # file 0
"""


def _rewrite() -> bytes:
    job = Job(WRITE, Options(), True)
    return process.process_source("f.py", TEMPLATE.encode(), job, None).output


def _env():
    return dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")


def test_two_runs_at_once_never_mix_a_file(tmp_path):
    count = 150
    for i in range(count):
        (tmp_path / f"f{i:03d}.py").write_text(TEMPLATE.replace("file 0", f"file {i}"))
    command = [sys.executable, "-m", "codemod", "--jobs", "2", str(tmp_path)]
    procs = [
        subprocess.Popen(
            command, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    rewrite = _rewrite()
    for i in range(count):
        data = (tmp_path / f"f{i:03d}.py").read_bytes()
        assert data == rewrite.replace(b"file 0", f"file {i}".encode()), i
    for proc, (_, err) in zip(procs, outputs):
        assert proc.returncode in (0, 2), err
        for line in err.decode().splitlines()[:-1]:  # the last line is the summary
            assert line.endswith(
                "changed while torchport was running; not written"
            ), line
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"f{i:03d}.py" for i in range(count)
    ]  # no temporary file
    # each file was replaced by one run only: the other found it replaced already
    rewrote = [int(err.decode().splitlines()[-1].split()[1]) for _, err in outputs]
    assert sum(rewrote) == count, rewrote


def _varied_tree(root: Path) -> None:
    root.mkdir()
    for i in range(40):
        (root / f"ok{i:02d}.py").write_text(TEMPLATE.replace("file 0", f"file {i}"))
    (root / "left.py").write_text('import torch\n\nDEVICES = ["cuda", "cpu"]\n')
    (root / "bad.py").write_text("x = torch.cuda(\n")
    (root / "plain.py").write_text("print('no accelerator here')\n")
    (root / "sub").mkdir()
    (root / "sub" / "deep.py").write_text("import torch\nt = torch.zeros(1).cuda()\n")


def test_jobs_1_and_2_give_identical_results(tmp_path):
    outputs = {}
    for jobs in ("1", "2"):
        root = tmp_path / f"jobs{jobs}"
        _varied_tree(root)
        proc = run_cli(["--jobs", jobs, "."], cwd=root)
        files = {
            str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*"))
            if p.is_file()
        }
        outputs[jobs] = (proc.returncode, proc.stdout, proc.stderr, files)
    assert outputs["1"] == outputs["2"]
    assert outputs["1"][0] == 2  # bad.py
    assert "DEVICES" in outputs["1"][3]["left.py"].decode()


def test_memory_stays_bounded_on_20000_files(tmp_path):
    root = tmp_path / "big"
    root.mkdir()
    for d in range(100):
        folder = root / f"pkg{d:02d}"
        folder.mkdir()
        for i in range(200):
            text = (
                TEMPLATE.replace("file 0", f"file {i}")
                if i == 0
                else f"def f{i}(x):\n    return x + {i}\n"
            )
            (folder / f"m{i:03d}.py").write_text(text)
    # ru_maxrss of RUSAGE_CHILDREN: the largest process torchport ran as (parent
    # or a worker), measured in a fresh interpreter that has no other children.
    probe = (
        "import resource, subprocess, sys\n"
        "proc = subprocess.run(sys.argv[1:], capture_output=True)\n"
        "print(proc.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            probe,
            sys.executable,
            "-m",
            "codemod",
            "--jobs",
            "2",
            ".",
        ],
        cwd=root,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=1800,  # a hang guard: it took 3 minutes on a loaded 2-core machine
    )
    code, peak_kib = map(int, proc.stdout.split())
    assert code == 0, proc.stderr
    assert ".to(_DEVICE())" in (root / "pkg42" / "m000.py").read_text()
    print(f"20,000 files: peak RSS {peak_kib / 1024:.0f} MiB")
    assert peak_kib < 500 * 1024, peak_kib
    shutil.rmtree(root)


# -- a file that changes between the last check and the rename ---------------------
def _read_for_write(target: Path):
    data, before = read_regular(target)
    job = Job(WRITE, Options(), False)
    output = process.process_source(str(target), data, job, target).output
    return data, before, output


def test_edit_just_before_the_rename_is_not_lost(tmp_path, monkeypatch):
    """An edit that lands after the bytes were compared, right before the rename:
    the stat taken at that moment no longer matches the one taken at read time."""
    target = tmp_path / "train.py"
    target.write_text(TEMPLATE)
    data, before, output = _read_for_write(target)
    edited = TEMPLATE.replace("file 0", "file 1")  # same size
    real_lstat = os.lstat

    def edit_then_lstat(path, *args, **kwargs):
        if os.path.basename(path) == target.name and target.read_text() == TEMPLATE:
            with open(target, "r+") as handle:  # in place: same inode
                handle.write(edited)
            os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", edit_then_lstat)
    with pytest.raises(FileChangedError):
        write_atomic(target, output, data, before)
    assert target.read_text() == edited
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"]


def test_file_replaced_by_another_with_the_same_bytes_is_not_overwritten(tmp_path):
    # Another program (or torchport run) renamed a new file over it: new inode.
    target = tmp_path / "train.py"
    target.write_text(TEMPLATE)
    data, before, output = _read_for_write(target)
    other = tmp_path / "other.py"
    other.write_text(TEMPLATE)
    os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(other, target)
    with pytest.raises(FileChangedError):
        write_atomic(target, output, data, before)
    assert target.read_text() == TEMPLATE


def test_a_file_another_run_is_replacing_is_left_to_it(tmp_path):
    """Each run holds an advisory lock on the file from its last check to the rename;
    a second run that finds it held does not replace the file as well."""
    fcntl = pytest.importorskip("fcntl")
    target = tmp_path / "train.py"
    target.write_text(TEMPLATE)
    data, before, output = _read_for_write(target)
    with open(target, "rb") as holder:
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)
        with pytest.raises(FileChangedError):
            write_atomic(target, output, data, before)
    assert target.read_text() == TEMPLATE
    write_atomic(target, output, data, before)  # free again: written
    assert target.read_bytes() == output


def test_file_swapped_for_a_link_after_discovery_is_not_followed(tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text(TEMPLATE)
    tree = tmp_path / "tree"
    tree.mkdir()
    target = tree / "train.py"
    target.symlink_to(outside)  # was a file when the folder was walked
    job = Job(WRITE, Options(), False)
    [result] = pool.run([target], job, jobs=1)
    assert result.error == f"{target}: is a symbolic link (not followed); not read"
    assert outside.read_text() == TEMPLATE


def test_file_swapped_for_a_pipe_after_discovery_does_not_block(tmp_path):
    target = tmp_path / "train.py"
    os.mkfifo(target)  # opening a pipe for reading waits for a writer
    job = Job(WRITE, Options(), False)
    results = []
    worker = threading.Thread(target=lambda: results.extend(pool.run([target], job)))
    worker.daemon = True
    worker.start()
    worker.join(120)  # a bound on a hang, not on speed: the run takes milliseconds
    assert results, "torchport blocked opening a named pipe"
    assert results[0].error == f"{target}: not a regular file (a named pipe); not read"
