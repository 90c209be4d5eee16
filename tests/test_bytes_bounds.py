"""One very large statement has a documented bound (README, ``run/limits.py``):
above it the file is refused on one line, at once, instead of minutes and
gigabytes; below it the statement is rewritten. The benchmarks that show the cost
linear run on small sizes."""

from __future__ import annotations

import subprocess
import sys

from codemod.model.options import Options
from codemod.run import process
from codemod.run.job import WRITE, Job
from tests.bytes_helpers import HANG_GUARD_S, environment, error_lines
from tests.cli_helpers import ROOT, run_cli


def _long_statement(size: int) -> str:
    items = ", ".join(str(i) for i in range(size // 7))
    return f"import torch\n\nx = torch.tensor([{items}]).cuda()\ny = 1\n"


def test_a_statement_over_the_bound_is_refused_on_one_line(tmp_path):
    from codemod.run.limits import MAX_STATEMENT_CHARS

    source = _long_statement(2 * MAX_STATEMENT_CHARS)
    (tmp_path / "big.py").write_text(source)
    (tmp_path / "ok.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    proc = run_cli(["big.py", "ok.py"], cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    size = len(source.splitlines(keepends=True)[2])
    assert error_lines(proc.stderr) == [
        f"big.py: cannot rewrite: the statement on line 3 is {size:,} characters;"
        f" torchport rewrites statements of up to {MAX_STATEMENT_CHARS:,}; file left"
        " untouched"
    ]
    assert (tmp_path / "big.py").read_text() == source
    assert ".to(_DEVICE())" in (tmp_path / "ok.py").read_text()


def test_a_long_statement_without_a_site_is_no_problem():
    # a big table beside a site: only statements that can hold a site count
    table = "TABLE = [" + ", ".join(str(i) for i in range(60_000)) + "]\n"
    source = "import torch\n" + table + "x = torch.ones(2).cuda()\n"
    result = process.process_source(
        "table.py", source.encode(), Job(WRITE, Options(), False)
    )
    assert result.error is None and result.changed


def test_a_statement_under_the_bound_is_rewritten():
    source = _long_statement(20_000)
    result = process.process_source(
        "long.py", source.encode(), Job(WRITE, Options(), False)
    )
    assert result.error is None
    assert b").to(_DEVICE())\n" in result.output


def _script(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_long_lines_script_prints_each_size_and_the_refusal_above_the_bound():
    out = _script(
        "scripts/long_lines.py", "--sizes", "2000,4000,8000", "--over", "120000"
    )
    lines = out.splitlines()
    assert sum(line.split()[0] in ("2000", "4000", "8000") for line in lines) == 6
    assert any("rewritten" in line for line in lines)
    over = [line for line in lines if line.split() and line.split()[0] == "120000"]
    assert over and all("refused" in line for line in over), out
    assert "cpu per MB" in lines[-1]


def test_notebook_script_prints_each_size_and_the_ratio():
    out = _script("scripts/notebook_sizes.py", "--cells", "3,6,12")
    rows = [
        line for line in out.splitlines() if line.split()[:1] in (["3"], ["6"], ["12"])
    ]
    assert len(rows) == 6 and all("exit 0: Rewrote 1 of 1 file" in r for r in rows), out
    assert out.count("cpu per cell, 12 cells / 3 cells:") == 2


# The command line under a cap on its address space (and its worker's): refusing a
# statement must cost about the file's size, not a tree of it (``ast`` would take
# 1.5 GB to read this one).
CAPPED = """
import resource, sys
limit = int(sys.argv.pop(1))
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from codemod.cli import main
sys.argv[0] = "torchport"
main()
"""


def test_refusing_a_ten_megabyte_statement_takes_little_memory(tmp_path):
    source = _long_statement(10_000_000)
    (tmp_path / "big.py").write_text(source)
    proc = subprocess.run(
        [sys.executable, "-c", CAPPED, str(1 << 30), "--no-format", "big.py"],
        cwd=tmp_path,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    size = len(source.splitlines(keepends=True)[2])
    assert error_lines(proc.stderr) == [
        f"big.py: cannot rewrite: the statement on line 3 is {size:,} characters;"
        " torchport rewrites statements of up to 100,000; file left untouched"
    ], proc.stderr[-2000:]
    assert proc.returncode == 2
    assert (tmp_path / "big.py").read_text() == source
