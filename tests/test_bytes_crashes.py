"""A file nested too deep is refused before a parser recurses into it, and a
worker that crashes anyway costs only the file it was on: never the run (exit 139
with no message, as one named file under pre-commit did), never another file."""

from __future__ import annotations

import faulthandler
import os
import signal
import subprocess
import sys

import pytest

from codemod.model.options import Options
from codemod.run import pool, process
from codemod.run.job import WRITE, Job
from tests.bytes_helpers import CUDA, environment, error_lines
from tests.cli_helpers import run_cli

DEEP = "import torch\nx = " + "(" * 1300 + "torch.ones(2).cuda()" + ")" * 1300 + "\n"
REFUSED = (
    "deep.py: cannot parse: brackets nested more than 200 deep on line 2 (Python's"
    " limit); not parsed"
)


@pytest.mark.parametrize(
    "args",
    [
        ["deep.py"],
        ["--jobs", "1", "deep.py", "ok.py"],
        ["--jobs", "2", "deep.py", "ok.py", "ok2.py"],
    ],
    ids=["one-file", "jobs-1", "jobs-2"],
)
def test_too_deep_is_one_line_and_the_others_are_rewritten(tmp_path, args):
    (tmp_path / "deep.py").write_text(DEEP)
    for name in ("ok.py", "ok2.py"):
        (tmp_path / name).write_text(CUDA)
    proc = run_cli(args, cwd=tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert error_lines(proc.stderr) == [REFUSED]
    assert (tmp_path / "deep.py").read_text() == DEEP
    for name in args[2:]:
        if name != "deep.py":
            assert ".to(_DEVICE())" in (tmp_path / name).read_text(), name


@pytest.mark.parametrize(
    "source",
    [
        # deep without a bracket, under the bound on a statement's size: CPython's
        # compiler gives up (MemoryError, RecursionError) before libcst is asked
        "import torch\nx = " + "-" * 20_000 + "torch.ones(2).cuda()\n",
        "import torch\nx = " + " + ".join(["torch.ones(2).cuda()"] * 4000) + "\n",
    ],
    ids=["unary-minus", "long-sum"],
)
def test_other_deep_shapes_are_one_line(source):
    result = process.process_source(
        "deep.py", source.encode(), Job(WRITE, Options(), False)
    )
    assert result.error is not None and "too deep" in result.error, result.error
    assert result.error.startswith("deep.py: cannot parse: ")


def test_the_same_shapes_over_the_bound_are_refused_by_size():
    source = "import torch\nx = " + "-" * 100_000 + "torch.ones(2).cuda()\n"
    result = process.process_source(
        "deep.py", source.encode(), Job(WRITE, Options(), False)
    )
    assert result.error == (
        "deep.py: cannot rewrite: the statement on line 2 is 100,025 characters;"
        " torchport rewrites statements of up to 100,000; file left untouched"
    )


def test_brackets_in_strings_and_comments_do_not_count():
    text = (
        "import torch\n"
        f"s = '{'(' * 300}'  # {'[' * 300}\n"
        f'd = """\n{"{" * 300}\n"""\n'
        "x = torch.ones(2).cuda()\n"
    )
    result = process.process_source(
        "ok.py", text.encode(), Job(WRITE, Options(), False)
    )
    assert result.error is None and result.changed


def test_text_that_is_not_ascii_beside_many_brackets_is_read():
    """Many brackets make the nesting scan run; non-ASCII code and fields must not
    stop it (an arrow in an f-string field, an emoji in an identifier's comment)."""
    text = (
        "import torch\n"
        + "".join(f"a{i} = f(({i}))\n" for i in range(120))
        + "print(f\"{'→'} saved 💾\")\n"
        + "ünïcode = [torch.ones(2).cuda()]\n"
    )
    result = process.process_source(
        "ok.py", text.encode(), Job(WRITE, Options(), False)
    )
    assert result.error is None and result.changed


# A worker that crashes on one file (a real SIGSEGV, as libcst's parser gave).
CRASH = """
import os, signal, sys
from codemod.run import process
real = process.process_source
def process_source(display, data, *args, **kwargs):
    if b"# crash here" in data:
        os.kill(os.getpid(), signal.SIGSEGV)
    return real(display, data, *args, **kwargs)
process.process_source = process_source
from codemod.cli import main
sys.argv[0] = "torchport"
main()
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_worker_crash_costs_only_its_own_file(tmp_path, jobs):
    names = [f"f{i}.py" for i in range(6)]
    for name in names:
        (tmp_path / name).write_text(CUDA)
    crashing = CUDA + "# crash here\n"
    (tmp_path / "f2.py").write_text(crashing)
    proc = subprocess.run(
        [sys.executable, "-c", CRASH, "--jobs", jobs, *names],
        cwd=tmp_path,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    assert error_lines(proc.stderr) == [
        "f2.py: a worker process died on this file (killed by SIGSEGV); the file is"
        " untouched or fully rewritten"
    ]
    assert (tmp_path / "f2.py").read_text() == crashing
    for name in names:
        if name != "f2.py":
            assert ".to(_DEVICE())" in (tmp_path / name).read_text(), name
    assert "Rewrote 5 of 6 files" in proc.stderr


def test_a_crash_in_the_pool_is_reported_with_how_the_worker_ended(
    tmp_path, monkeypatch
):
    files = [tmp_path / f"f{i}.py" for i in range(4)]
    for path in files:
        path.write_text(CUDA)
    files[1].write_text(CUDA + "# abort\n")
    real = process.process_source

    def abort_on_marker(display, data, *args, **kwargs):
        if b"# abort" in data:
            faulthandler.disable()  # pytest's: it would print the worker's stack
            os.kill(os.getpid(), signal.SIGABRT)
        return real(display, data, *args, **kwargs)

    monkeypatch.setattr(process, "process_source", abort_on_marker)
    results = pool.run(files, Job(WRITE, Options(), False), jobs=2)
    assert [r.error is None for r in results] == [True, False, True, True]
    assert "(killed by SIGABRT)" in results[1].error
    assert all(r.written for i, r in enumerate(results) if i != 1)
