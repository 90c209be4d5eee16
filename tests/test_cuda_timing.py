"""The rewrite never queries CUDA earlier than the original did.

Every fixture's before and after file is imported (not run as ``__main__``) with each
CUDA query recorded (tests/cuda_touch_probe.py says what counts): the after file's
first query must come no earlier than the before file's, measured by what the program
had done by then (printed, written to ``os.environ``, forked). An after file that
queries CUDA where its before file never did fails too. On a CPU-only build the
queries still happen, with the same arguments, so the CPU shows when CUDA would be
touched.

The accessor finds the device on first use: an after file whose import asks any
device question (``torch.accelerator.device_count()`` and ``current_accelerator()``
too, which initialise nothing) where its before file asked none fails, whether the
question comes from a module constant, a class attribute, a default argument, a
dataclass field or a decorator.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CPU_ENV
from tests.fixture_cases import (
    after_of,
    before_files,
    case_id,
    options_of,
    program_files,
)

PROBE = Path(__file__).with_name("cuda_touch_probe.py")
CASES = [b for b in before_files() + program_files() if after_of(b).exists()]
EARLIER = ("printed", "environ", "forks")


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    """case id -> (the before file's answer, the after file's)."""
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
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(answers) == len(files), proc.stderr[-2000:]
    return {
        case_id(b): (answers[2 * i], answers[2 * i + 1]) for i, b in enumerate(CASES)
    }


@pytest.fixture(scope="module")
def first_queries(probed):
    """case id -> (the before file's first CUDA query, the after file's)."""
    return {case: (b["first"], a["first"]) for case, (b, a) in probed.items()}


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


# Cases run with --unsafe-fixes: an unsafe fix may ask for the device at import
# (that is why it is unsafe).
SAFE_ONLY = [b for b in CASES if not options_of(b.read_text("utf-8")).unsafe_fixes]


# Ports that ask at import where the original, as it ran here, asked nothing: what
# torchport takes for a CUDA use there is none. Exact: a listed case that asks
# nothing fails too.
ASKS_AT_IMPORT = {
    # `Double().cuda()` at import: the module holds no tensor, so Module.cuda()
    # moves nothing and touches no CUDA; torchport counts any .cuda() as a use.
    "binding/optional_torch_find_spec": "torch.accelerator.device_count",
}


@pytest.mark.parametrize("case", [case_id(b) for b in SAFE_ONLY])
def test_the_rewrite_asks_for_no_device_at_import(probed, case):
    """Where the original's import asked no device question (and ran through: a
    CUDA program on the CPU raises where it asks, in compiled code the probe does
    not see), the port's asks none either."""
    before, after = probed[case]
    if before["asked"] is None and not before["raised"]:
        assert after["asked"] == ASKS_AT_IMPORT.get(case), "at import"


def test_the_probe_sees_device_questions(probed):
    """Not a blind probe: the accessor's count is seen where a port reads the device
    at import (the before files that ask already, or raise, are most of them)."""
    asked = [a["asked"] for _, a in probed.values() if a["asked"]]
    assert "torch.accelerator.device_count" in asked


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


IMPORT_TIME = """\
import dataclasses

import torch

DEFAULT = torch.device("cuda")


class Model:
    device = torch.device("cuda")


@dataclasses.dataclass
class Config:
    device: str = "cuda"
    make: object = dataclasses.field(default_factory=lambda: torch.device("cuda"))


def f(x, device="cuda"):
    return x


def tag(device):
    return lambda function: function


@tag(device="cuda")
def g():
    here = torch.device("cuda")
    return here
"""


@pytest.mark.parametrize("target", [(2, 7), (2, 10)], ids=["2.7", "2.10"])
def test_reads_at_import_are_reported_on_every_target(target):
    """A module constant, a class attribute, a dataclass default, a default argument
    and a decorator's argument are read at import: reported, whatever the target;
    a lambda's body and a function's body run when called: ported."""
    from codemod.model.options import Options
    from codemod.passes.device_reads import EARLY_READ
    from codemod.rewrite.pipeline import rewrite_source

    result = rewrite_source(
        IMPORT_TIME, Options(target_torch=target), positions="input"
    )
    early = sorted(d.line for d in result.diagnostics if EARLY_READ in d.message)
    assert early == [5, 9, 14, 18, 26]
    assert not any(d.applied for d in result.diagnostics if d.line in early)
    name = Options().device_name
    assert f"default_factory=lambda: {name}()" in result.code
    assert f"    here = {name}()\n" in result.code


def test_a_function_the_import_calls_reads_at_import():
    from codemod.model.options import Options
    from codemod.rewrite.pipeline import rewrite_source

    source = (
        "import torch\n\n\ndef make():\n    return torch.device('cuda')\n\n\n"
        "made = make()\n"
    )
    result = rewrite_source(source, Options())
    assert result.code == source
    called_later = source.replace("made = make()\n", "made = None\n")
    assert f"{Options().device_name}()" in rewrite_source(called_later, Options()).code
