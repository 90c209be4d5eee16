"""black in a helper process formats exactly as black in this process does."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.fixture_cases import FIXTURES

pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork") or (os.cpu_count() or 1) < 2,
    reason="the helper runs only where it can be forked onto another core",
)

CASES = sorted(str(p) for p in FIXTURES.glob("*/*.before.py"))
# Where black lays out most: the formatting cases, and whole programs.
FEW = [p for p in CASES if "/formatting/" in p or "/end_to_end/" in p]

# Run in a fresh interpreter: the helper starts only before black is imported, in a
# process without other threads.
SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from codemod.run import black_helper
    from codemod.rewrite.formatting import Layout
    from codemod.model.options import Options

    def rewrites(mode):
        from codemod.rewrite.pipeline import rewrite_source
        return [
            rewrite_source(Path(p).read_text(encoding="utf-8"), Options(),
                           format_mode=mode).code
            for p in sys.argv[2:]
        ]

    with black_helper.started() as helper:
        assert helper is not None, "no helper"
        if sys.argv[1] == "dead":
            os.kill(helper.pid, signal.SIGKILL)
            os.waitpid(helper.pid, 0)
        through_helper = rewrites(Layout(helper=helper))
        imported_here = "black" in sys.modules
        if sys.argv[1] == "refused":
            try:
                helper.format_str("x = (\\n", 88, [(1, 1)])
            except ValueError as error:
                print("refused:", error)
    import black
    print(through_helper == rewrites(black.Mode()), imported_here, len(through_helper))
""")


def _run(how: str, cases) -> list:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, how, *cases],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_the_helper_formats_every_fixture_as_black_does_here():
    # The same text, and black never imported by this process.
    assert _run("alive", CASES) == ["True", "False", str(len(CASES))]


def test_a_dead_helper_leaves_black_to_this_process():
    assert _run("dead", FEW) == ["True", "True", str(len(FEW))]


def test_code_black_refuses_is_refused_through_the_helper():
    out = _run("refused", FEW)
    assert out[0] == "refused:" and out[-3:] == ["True", "False", str(len(FEW))]


def test_a_one_file_run_lays_out_through_the_helper(tmp_path):
    """The engine starts the helper for a run it does in its own process, and the
    file comes out as black in this process would lay it out."""
    source = (
        "import torch\n"
        "batch = torch.tensor([[0.5, 1.5, 2.5, 3.5], [4.5, 5.5, 6.5, 7.5]],"
        " dtype=torch.float32).cuda()\n"
    )
    (tmp_path / "train.py").write_text(source)
    script = textwrap.dedent("""
        import sys
        from pathlib import Path
        from codemod.run.job import WRITE, Job
        from codemod.run.pool import run
        from codemod.model.options import Options
        [result] = run([Path("train.py")], Job(WRITE, Options(), True), jobs=1)
        print(result.changed, "black" in sys.modules)
    """)
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "False"]
    import black

    from codemod.model.options import Options
    from codemod.rewrite.pipeline import rewrite_source

    here = rewrite_source(source, Options(), format_mode=black.Mode()).code
    assert (tmp_path / "train.py").read_text() == here
    assert "batch = torch.tensor(\n" in here  # black did lay it out
