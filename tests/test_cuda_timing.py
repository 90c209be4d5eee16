"""The rewrite never queries CUDA earlier than the original did.

Every fixture's before and after file is imported (not run as ``__main__``) with each
CUDA query recorded (tests/cuda_touch_probe.py says what counts): the after file's
first query must come no earlier than the before file's, measured by what the program
had done by then (printed, written to ``os.environ``, forked). An after file that
queries CUDA where its before file never did fails too. On a CPU-only build the
queries still happen, with the same arguments, so the CPU shows when CUDA would be
touched.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CPU_ENV
from tests.fixture_cases import after_of, before_files, case_id, program_files

PROBE = Path(__file__).with_name("cuda_touch_probe.py")
CASES = [b for b in before_files() + program_files() if after_of(b).exists()]
EARLIER = ("printed", "environ", "forks")


@pytest.fixture(scope="module")
def first_queries(tmp_path_factory):
    """case id -> (the before file's first query, the after file's)."""
    cwd = tmp_path_factory.mktemp("probe")
    files = [f for b in CASES for f in (b, after_of(b))]
    requests = "".join(
        json.dumps({"path": str(f), "cwd": str(cwd)}) + "\n" for f in files
    )
    proc = subprocess.run(
        [sys.executable, str(PROBE)],
        input=requests,
        capture_output=True,
        text=True,
        env=CPU_ENV,
        check=True,
    )
    answers = [json.loads(line)["first"] for line in proc.stdout.splitlines()]
    assert len(answers) == len(files), proc.stderr[-2000:]
    return {
        case_id(b): (answers[2 * i], answers[2 * i + 1]) for i, b in enumerate(CASES)
    }


def _earlier(before, after) -> str:
    if after is None:
        return ""
    if before is None:
        return f"{after['query']} where the original queried nothing"
    early = [k for k in EARLIER if after[k] < before[k]]
    return f"{after['query']} before {before['query']}: {early}" if early else ""


@pytest.mark.parametrize("case", [case_id(b) for b in CASES])
def test_the_rewrite_queries_cuda_no_earlier(first_queries, case):
    before, after = first_queries[case]
    assert not _earlier(before, after)


def test_the_probe_sees_queries(first_queries):
    """Not a blind probe: CUDA programs do query at import, and torchport's output
    imports without a query in most cases."""
    befores = sum(b is not None for b, _ in first_queries.values())
    afters = sum(a is not None for _, a in first_queries.values())
    assert befores > len(CASES) // 4 and afters < befores


def test_an_earlier_query_is_caught():
    printed = {"query": "torch.cuda.is_available", "printed": 5, "environ": 0}
    early = dict(printed, query="torch.accelerator.is_available", printed=0)
    assert _earlier({**printed, "forks": 0}, {**early, "forks": 0})
    assert _earlier(None, {**early, "forks": 0})
    assert not _earlier({**early, "forks": 0}, {**printed, "forks": 0})
