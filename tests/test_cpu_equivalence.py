"""Where the original runs, the port computes the same: every fixture whose before file
runs on this CPU host prints, rewritten, exactly what it printed (dtypes included).

Each before file (``fixtures/*/*.before.py`` and ``fixtures/programs/``) runs on CPU
PyTorch in the program runner (tests/program_runner.py); one that fails there (it needs
CUDA: ``.cuda()``, a CUDA-only call) is skipped with its error line, since a CPU host
cannot run the original. The after file runs as tests/test_fixtures.py runs it (once a
session, shared). Their outputs must be equal, character for character: on a CPU host
``_DEVICE()`` is the CPU, so nothing differs but what torchport changed.

The AMP fixtures (``fixtures/TP4xx/cpu_host_*``) print the dtypes their autocast regions
compute in and whether their scalers are enabled: CUDA's autocast and scaler are disabled
on a CPU host, so the port must not turn the CPU's on. Each of them must run here
(``MUST_RUN``): a skip would hide the very check.
"""

from __future__ import annotations

import re
from typing import Dict, Tuple

import pytest

from tests.fixture_cases import after_of, before_files, case_id, program_files
from tests.simulated_output import error_line

CASES = before_files() + program_files()
# The fixtures written to show that AMP on a CPU host computes as the original did.
MUST_RUN = {case_id(b) for b in CASES if b.name.startswith("cpu_host_")}
# case -> why its rewritten program prints something else on a CPU host. Strict: a
# listed case that prints the same fails until it is removed.
DIFFERS_ON_CPU: Dict[str, str] = {
    "TP505/spawn_device_count": (
        "mp.spawn(nprocs=torch.cuda.device_count()) started no process on a CPU host;"
        " the port's max(torch.accelerator.device_count(), 1) runs the worker once,"
        " on the CPU (TP505)"
    ),
}
# case -> (what differs between any two runs, a regular expression masking it)
VARIES: Dict[str, Tuple[str, str]] = {
    "TP908/profiler_cuda_columns": (
        "profiler timings",
        r" *\d+\.\d+(?:%|us|ms|s)(?!\w)",
    ),
}


def test_every_amp_form_has_a_cpu_host_fixture():
    folders = {case.split("/")[0] for case in MUST_RUN}
    assert {"TP401", "TP402", "TP403", "TP404"} <= folders, sorted(MUST_RUN)
    assert set(DIFFERS_ON_CPU) | set(VARIES) <= {case_id(b) for b in CASES}


@pytest.mark.parametrize("before", CASES, ids=case_id)
def test_the_port_prints_what_the_original_printed_on_the_cpu(
    before, program_runner, tmp_path
):
    case = case_id(before)
    (tmp_path / "before").mkdir()
    original = program_runner.run(before, tmp_path / "before")
    if original.returncode != 0:
        assert case not in MUST_RUN, f"fails on the CPU:\n{original.stderr[-3000:]}"
        pytest.skip(f"the original fails on the CPU: {error_line(original.stderr)}")
    port = program_runner.run(after_of(before), tmp_path / "after")
    assert port.returncode == 0, f"the port fails on the CPU:\n{port.stderr[-3000:]}"
    printed, ported = original.stdout, port.stdout
    if case in VARIES:
        mask = re.compile(VARIES[case][1], re.MULTILINE)
        assert mask.search(printed), f"masks nothing now: remove {case}"
        printed, ported = mask.sub("<masked>", printed), mask.sub("<masked>", ported)
    if case in DIFFERS_ON_CPU:
        assert ported != printed, f"the same now: remove {case}"
        return
    assert ported == printed
