"""Parallel runs: never a mixed or empty file, the same result with any --jobs,
and bounded memory on a big tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from codemod import engine
from codemod.passes.base import Options
from tests.cli_helpers import ROOT, run_cli

TEMPLATE = """import torch

x = torch.ones(4).cuda()
y = x.pin_memory()
on = x.is_cuda
where = "cuda" if torch.cuda.is_available() else "cpu"
n = 0  # file 0
"""


def _rewrite() -> bytes:
    job = engine.Job(engine.WRITE, Options(), True)
    return engine.process_source("f.py", TEMPLATE.encode(), job, None).output


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
    assert ".to(DEVICE)" in (root / "pkg42" / "m000.py").read_text()
    print(f"20,000 files: peak RSS {peak_kib / 1024:.0f} MiB")
    assert peak_kib < 500 * 1024, peak_kib
    shutil.rmtree(root)
