"""Every fixture after file and every program, run on the CPU and on the simulated
accelerator: the same output, and every kind of accelerator branch executed.

On the CPU, ``DEVICE`` is the CPU, so what torchport writes for an accelerator never runs
there. Here each after file (``fixtures/*/*.after.py`` and ``fixtures/programs/``; not
the notebooks) also runs with the tpsim simulator loaded (codemod/simulate, 2 devices):
in a second program runner (tests/program_runner.py) started with
``codemod.simulate.environment()``, which imports torch once with the simulator and forks
a child per program (programs that call ``mp.spawn`` run fresh). tests/conftest.py runs
each program once a session on each side, shared with tests/test_fixtures.py's and
tests/test_programs.py's CPU runs.

**Same output.** stdout must be the same once device names are read alike and numbers
within a relative 1e-3 (tests/simulated_output.py says exactly what is normalised).
What differs whoever ports the code is listed in ``DIFFERS_BY_DESIGN``, case by case,
with the text it concerns:

- a program that prints whether there is an accelerator, how many devices, the current
  device index, whether a tensor is on the accelerator, or allocator statistics (the
  CPU has no allocator statistics: torchport's guards print 0 there);
- random numbers drawn on the device (``torch.randn(..., device=DEVICE)``, dropout on
  the device, weights initialised under ``set_default_device``) come from the device's
  generator, which is not the CPU's, as on CUDA;
- autocast and ``GradScaler``: on a CPU host CUDA's stay disabled, as the original's
  were there, and the program computes in float32; on tpsim, as on CUDA, autocast
  casts to float16 by default and the scaler scales. A program that prints a dtype, a
  scale or a value computed under autocast prints other text, and fp16 gradients
  overflow where float32 ones do not, so ``GradScaler`` skips a step on tpsim that the
  CPU takes (TP401/argparse_flag). The entries say which of these a case shows;
- profiler timings, which differ between any two runs.

**Known failures.** What fails on tpsim or differs from the CPU because of what torchport
wrote (or left) is listed in ``FAILS_ON_TPSIM`` and ``DIFFERS_ON_TPSIM``: the case, the
idiom at fault, and the first error line (the exception line of its traceback) or the
first tpsim line that differs. They are exact: a listed case that runs the same, or
fails otherwise, fails the test, as does an unlisted case that fails; fixing torchport's
output makes its entry fail until it is removed.

**Kinds.** tests/branch_tracer.py finds, in each after file's AST, the sites of each
kind of accelerator branch (guards' accelerator sides, ``torch.get_device_module(DEVICE).X``,
``torch.accelerator.X``, ``.to(DEVICE)``, ``torch.Stream``/``torch.Event``, device
arguments); the tpsim runs are traced. Each accelerator kind emitted must be executed
on some tpsim run, except those in ``KINDS_NEVER_EXECUTED``; the CUDA-only guards
(``DEVICE.type == "cuda"``) must never be.
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Dict, Tuple

import pytest

from tests import branch_tracer
from tests.fixture_cases import FIXTURES, after_of, before_files, program_files
from tests.simulated_output import ByDesign, compare, error_line, matches

pytestmark = pytest.mark.simulator


def _cases() -> Dict[str, Path]:
    afters = [after_of(b) for b in before_files() + program_files()]
    return {a.relative_to(FIXTURES).as_posix()[: -len(".after.py")]: a for a in afters}


CASES = _cases()


# The other idioms at fault, as the report groups them.
DATA_PARALLEL = "nn.DataParallel with no CUDA test around it (TP506, reported)"
SCATTER = "AttributeError: module 'torch._C' has no attribute '_scatter'"

GLOO = (
    'init_process_group("gloo") kept for device tensors (TP507, reported): gloo serves'
    " CPU and CUDA tensors only, and every other backend changes what CUDA runs"
)
# case -> (idiom at fault, the error line on tpsim)
FAILS_ON_TPSIM: Dict[str, Tuple[str, str]] = {
    "TP305/stream_context_target_2_6": (
        "with torch.cuda.stream(s) reported at target 2.6 (TP305: a torch.Stream is a"
        " context manager from torch 2.7), and torch.cuda's StreamContext asks"
        " torch.cuda for its current stream",
        "AssertionError: Torch not compiled with CUDA enabled",
    ),
    "TP305/set_stream": (
        "y is computed on a side stream and read on the previous one with no"
        " wait_stream: a race on CUDA too (its stream sanitizer reports it), kept"
        " as written",
        "RuntimeError: tpsim stream check: a tensor's memory on tpsim:0 (12 bytes) is"
        " read on the default stream of tpsim:0, but it was written on stream...",
    ),
    "TP506/unguarded": (DATA_PARALLEL, SCATTER),
    "TP507/accelerated_branch": (
        GLOO,
        "RuntimeError: No backend type associated with device type tpsim",
    ),
}
OPTIMIZER_FIRST = (
    "the optimizer is made before the model moves (TP205, reported): on a"
    " PrivateUse1 backend Module.to makes new Parameters (c10 lists only CPU, CUDA,"
    " MPS, HIP, XPU, HPU and MTIA as dense backends whose tensors it may swap in"
    " place), so the optimizer steps the host ones and the model never trains"
)
# case -> (idiom at fault, the first tpsim line that differs)
DIFFERS_ON_TPSIM: Dict[str, Tuple[str, str]] = {
    "TP313/default_tensor_type": (
        "model.type(torch.cuda.FloatTensor) kept behind torch.cuda.is_available()"
        " (TP313, TP301 reported): elsewhere the model stays float16",
        "torch.float16",
    ),
    "programs/ddp_tutorial_gpu_id": (OPTIMIZER_FIRST, "[GPU0] epoch 0 loss 1.2388"),
    "TP205/optimizer_before_move": (OPTIMIZER_FIRST, "False"),
    "TP205/handed_or_aliased": (OPTIMIZER_FIRST, "False"),
    "TP205/tied_before_move": (
        "modules tie a parameter before the model moves (TP205, reported): on a"
        " PrivateUse1 backend Module.to makes a new Parameter for each module, so"
        " the tie is broken",
        "(False, 2)",
    ),
}
ON_ACCELERATOR = "prints whether there is an accelerator, or what it is or has"
DEVICE_RNG = "draws random numbers on the device, whose generator is not the CPU's"
AMP_ON_ACCELERATOR = (
    "autocasts on the accelerator only: on a CPU host CUDA's autocast stays disabled,"
    " as the original's was, and computes in float32"
)
SCALER_ON_ACCELERATOR = (
    "scales on the accelerator only: on a CPU host CUDA's GradScaler disables itself,"
    " as the original's did"
)
DIFFERS_BY_DESIGN: Dict[str, ByDesign] = {
    "TP401/autocast_context": ByDesign(
        AMP_ON_ACCELERATOR, [("torch.float32", "torch.float16")]
    ),
    "TP401/autocast_decorator": ByDesign(
        AMP_ON_ACCELERATOR, [("torch.float32", "torch.float16")]
    ),
    "TP401/autocast_positional": ByDesign(
        AMP_ON_ACCELERATOR,
        [
            (
                "torch.float32 torch.float32 torch.float32",
                "torch.bfloat16 torch.float32 torch.bfloat16",
            )
        ],
    ),
    "TP401/torch_alias": ByDesign(
        AMP_ON_ACCELERATOR, [("torch.float32", "torch.bfloat16")]
    ),
    "TP404/autocast_state": ByDesign(
        AMP_ON_ACCELERATOR + " (its state says so)", [("False\nFalse", "True\nFalse")]
    ),
    "TP402/grad_scaler_multiline": ByDesign(
        SCALER_ON_ACCELERATOR, [("enabled False\n", "enabled True\n100 2.0\n")]
    ),
    "TP402/grad_scaler_positional": ByDesign(
        SCALER_ON_ACCELERATOR,
        [("False False False\n", "True True False\n1024.0 4.0 0.25\n50\n")],
    ),
    "TP407/grad_scaler_default_device": ByDesign(
        SCALER_ON_ACCELERATOR,
        [("False False\n", "True True\n65536.0 256.0 10\n16.0 True\n")],
    ),
    "TP401/cpu_host_autocast_context": ByDesign(
        AMP_ON_ACCELERATOR,
        [
            (
                "torch.float32 torch.float32 torch.float32",
                "torch.float16 " * 2 + "torch.float16",
            )
        ],
    ),
    "TP401/cpu_host_cuda_amp_autocast": ByDesign(
        AMP_ON_ACCELERATOR,
        [
            (
                "torch.float32 torch.float32 torch.float32",
                "torch.float16 torch.bfloat16 torch.float16",
            )
        ],
    ),
    "TP401/cpu_host_decorators": ByDesign(
        AMP_ON_ACCELERATOR + "; its enabled=False decorators switch the accelerator's"
        " autocast off under the caller's, as CUDA's on CUDA, and on a CPU host CUDA's,"
        " leaving the caller's CPU autocast on as the original did",
        [
            ("decorated torch.float32", "decorated torch.float16"),
            (
                "torch.bfloat16 torch.bfloat16\ninside torch.bfloat16",
                "torch.bfloat16 torch.float32\ninside torch.float32",
            ),
        ],
    ),
    "TP404/cpu_host_widened_branch": ByDesign(
        AMP_ON_ACCELERATOR + "; " + SCALER_ON_ACCELERATOR,
        [
            ("torch.float32 torch.float32", "torch.float16 torch.float16"),
            ("default torch.float32 False", "default torch.float16 True"),
        ],
    ),
    "TP402/cpu_host_grad_scaler": ByDesign(
        SCALER_ON_ACCELERATOR,
        [
            (
                "enabled False False False\nscale 1.0 1.0",
                "enabled True True True\nscale 1024.0 256.0",
            )
        ],
    ),
    "programs/grad_accumulation_scaler": ByDesign(
        SCALER_ON_ACCELERATOR, [("scale 1.0", "scale 4096.0")]
    ),
    "TP102/custom_device_name": ByDesign(DEVICE_RNG, [("4.0132", "2.8071")]),
    "TP105/argparse_default": ByDesign(DEVICE_RNG, [("-2.8459", "-2.6309")]),
    "TP105/nanogpt_device_type": ByDesign(DEVICE_RNG, [("6.5966", "6.0355")]),
    "TP202/guards_cuda_only": ByDesign(
        ON_ACCELERATOR + " (a tensor on it)", [("8.0]] False", "8.0]] True")]
    ),
    "TP505/spawn_device_count": ByDesign(
        "one process per device", [("world size 1", "world size 2")]
    ),
    "TP301/assert_widened_with_amp_import": ByDesign(
        "asserts an accelerator", [("AMP training needs an accelerator", "2.0")]
    ),
    "TP301/availability": ByDesign(
        ON_ACCELERATOR,
        [("accelerator: False", "accelerator: True"), ("devices: 0", "devices: 2")],
    ),
    "TP301/device_index_target_2_8": ByDesign(
        "prints only under torch.accelerator.is_available()", [("", "2.0\n")]
    ),
    "TP301/target_2_6": ByDesign(ON_ACCELERATOR, [("False 0", "True 2")]),
    "TP301/hard_requirements": ByDesign(
        "requires an accelerator",
        [
            ("train AssertionError needs a GPU", "train 2.0"),
            ("launch RuntimeError CUDA is required", "launch launched"),
            ("main SystemExit no GPU found", "main 1.0"),
        ],
    ),
    "TP301/from_torch_cuda_import": ByDesign(
        "prints the device only under torch.accelerator.is_available()",
        [("", "tpsim\n")],
    ),
    "TP303/device_context_int_index": ByDesign(
        "one total per device", [("[2.0, 4.0]", "[2.0, 2.0, 4.0]")]
    ),
    "TP308/guard_implied": ByDesign(
        ON_ACCELERATOR + " (allocator statistics)",
        [("", "allocated True\npeak True\n"), ("reserved 0", "reserved 8")],
    ),
    "TP308/inside_device_test": ByDesign(
        ON_ACCELERATOR + " (allocator statistics); " + DEVICE_RNG,
        [("no accelerator 0", "peak MiB 0"), ("-1.9091", "-4.0815")],
    ),
    "TP307/known_event_receivers": ByDesign(
        "times on the accelerator only (CPU events cannot time)",
        [("timed not on this device", "timed True")],
    ),
    "TP313/isinstance": ByDesign(
        ON_ACCELERATOR + " (a tensor on it)",
        [
            ("", "a CUDA float tensor\n"),
            ("float on cuda: False", "float on cuda: True"),
        ],
    ),
    "TP401/argparse_flag": ByDesign(
        "fp16 autocast and a GradScaler on tpsim (float32 on a CPU host, the scaler"
        " disabled, as the original): the first scaled fp16 gradients overflow and"
        " GradScaler skips that step, as on CUDA",
        [("0.354\n0.014", "0.353\n0.353")],
    ),
    "TP401/import_amp_as": ByDesign(
        DEVICE_RNG + "; and autocasts to fp16 there, to bf16 on the CPU",
        [("-3.55", "3.03")],
    ),
    "TP403/custom_function": ByDesign(
        DEVICE_RNG,
        [("[9.246, -1.761, -13.073, 3.411]", "[-7.304, -4.904, -4.635, -6.768]")],
    ),
    "TP908/profiler_cuda_columns": ByDesign(
        "profiler timings", masks=[r" *\d+\.\d+(?:%|us|ms|s)(?!\w)"]
    ),
    "fstrings/no_quote_left": ByDesign(ON_ACCELERATOR, [("0 devices", "2 devices")]),
    "fstrings/self_documenting": ByDesign(
        ON_ACCELERATOR, [("device_count() = 0, 0", "device_count() = 0, 2")]
    ),
    "programs/batch_to_device_helper": ByDesign(
        ON_ACCELERATOR + " (tensors on it)",
        [("all moved: False", "all moved: True")],
    ),
    "programs/default_tensor_type_llama": ByDesign(
        ON_ACCELERATOR + " (a weight on it); " + DEVICE_RNG + " (its initial weights)",
        [
            ("weight on gpu: False", "weight on gpu: True"),
            ("out sum -2.69", "out sum -2.0"),
        ],
    ),
    "programs/device_context_manager": ByDesign(
        ON_ACCELERATOR + " (the device index of a tensor on it)",
        [("index -1", "index 0")],
    ),
    "programs/early_return_gpu_info": ByDesign(
        ON_ACCELERATOR, [("summary: no GPU", "summary: 2 GPU(s), current 0")]
    ),
    "programs/event_timed_benchmark": ByDesign(
        DEVICE_RNG + "; and times on the accelerator only (CPU events cannot time)",
        [("checksum 569.9", "checksum -1835.3"), ("(not measured)", "(measured)")],
    ),
    "programs/fstring_cuda_report": ByDesign(
        ON_ACCELERATOR,
        [
            ("cuda available: False, devices: 0", "cuda available: True, devices: 2"),
            ("params on cpu: False", "params on tpsim: True"),
        ],
    ),
    "programs/is_cuda_checks": ByDesign(
        ON_ACCELERATOR + " (tensors on it)",
        [("placement: cpu", "placement: gpu 0"), ("gpu: False", "gpu: True")],
    ),
    "programs/legacy_tensor_types": ByDesign(
        ON_ACCELERATOR + " (a tensor on it)",
        [("float tensor: False", "float tensor: True")],
    ),
    "programs/memory_profile_report": ByDesign(
        ON_ACCELERATOR + " (allocator statistics)",
        [
            ("added 0.000 MiB", "added 0.125 MiB"),
            ("reserved 0.0 MiB", "reserved 0.4 MiB"),
        ],
    ),
    "programs/style/cleanup_guards": ByDesign(
        ON_ACCELERATOR + " (allocator statistics); " + DEVICE_RNG,
        [("", "allocated True\n"), ("x mean -0.0179", "x mean -0.0478")],
    ),
    "programs/style/mnist_main": ByDesign(
        "shuffles its data only where there is an accelerator",
        [("Loss: 2.309", "Loss: 2.253"), ("Loss: 2.215", "Loss: 2.169")],
    ),
    "programs/trainer_amp_memory": ByDesign(
        ON_ACCELERATOR + " (allocator statistics)", [("peak 0.00 MB", "peak 0.01 MB")]
    ),
}
# kind -> why no tpsim run executes it (none today: TP104/negated_tests_on_a_device_
# tensor reaches the last two with a tensor on the accelerator)
KINDS_NEVER_EXECUTED: Dict[str, str] = {}


def _outcome(case: str, cpu, tpsim) -> Tuple[str, str]:
    if tpsim.returncode != 0:
        return "fails", error_line(tpsim.stderr)
    difference = compare(cpu.stdout, tpsim.stdout, DIFFERS_BY_DESIGN.get(case))
    if difference is None:
        return "same", ""
    return "differs", difference[2]


def _runs(fixture_runs, case: str, folder: Path):
    tpsim = fixture_runs.get("tpsim", CASES[case], folder / "tpsim")
    cpu = fixture_runs.get("cpu", CASES[case], folder / "cpu")
    return cpu, tpsim


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_output_on_the_simulated_accelerator(case, fixture_runs, tmp_path):
    cpu, tpsim = _runs(fixture_runs, case, tmp_path)
    assert cpu.returncode == 0, f"fails on the CPU:\n{cpu.stderr[-3000:]}"
    outcome, line = _outcome(case, cpu, tpsim)
    if case in FAILS_ON_TPSIM:
        idiom, expected = FAILS_ON_TPSIM[case]
        assert outcome == "fails", f"runs now ({outcome}; was: {idiom}): remove it"
        assert matches(line, expected), f"fails otherwise now:\n{tpsim.stderr[-3000:]}"
    elif case in DIFFERS_ON_TPSIM:
        idiom, expected = DIFFERS_ON_TPSIM[case]
        assert outcome != "fails", f"fails now:\n{tpsim.stderr[-3000:]}"
        assert outcome == "differs", f"the same now (was: {idiom}): remove it"
        assert matches(line, expected), f"differs otherwise now: {line!r}"
    else:
        assert outcome != "fails", f"fails on tpsim:\n{tpsim.stderr[-3000:]}"
        assert outcome == "same", (
            f"differs on tpsim: {line!r}\n--- cpu\n{cpu.stdout[-2000:]}"
            f"\n--- tpsim\n{tpsim.stdout[-2000:]}"
        )


def test_the_tables_name_real_cases():
    tables = (FAILS_ON_TPSIM, DIFFERS_ON_TPSIM, DIFFERS_BY_DESIGN)
    for table in tables:
        assert set(table) <= set(CASES), set(table) - set(CASES)
    assert not set(FAILS_ON_TPSIM) & set(DIFFERS_ON_TPSIM)


def _tally(fixture_runs, folder: Path):
    """For each (kind, category) emitted: the cases that emit it, the tpsim hits."""
    emitted = collections.defaultdict(set)
    executed = collections.Counter()
    for case, path in sorted(CASES.items()):
        hits = fixture_runs.get("tpsim", path, folder / case / "tpsim").hits
        for site in branch_tracer.sites(path.read_bytes()):
            emitted[site.kind, site.category].add(case)
            executed[site.kind, site.category] += hits.get(site.index, 0)
    return emitted, executed


def test_every_emitted_kind_is_executed_on_the_simulated_accelerator(
    fixture_runs, tmp_path
):
    emitted, executed = _tally(fixture_runs, tmp_path)
    accelerator = {k for k, c in emitted if c == branch_tracer.ACCELERATOR}
    never = sorted(k for k in accelerator if not executed[k, branch_tracer.ACCELERATOR])
    assert set(KINDS_NEVER_EXECUTED) <= accelerator, "listed kinds no after file emits"
    newly = [k for k in KINDS_NEVER_EXECUTED if k not in never]
    assert not newly, f"executed now: remove them from KINDS_NEVER_EXECUTED: {newly}"
    missing = {
        k: sorted(emitted[k, branch_tracer.ACCELERATOR])[:3]
        for k in never
        if k not in KINDS_NEVER_EXECUTED
    }
    assert not missing, f"emitted kinds no tpsim run executes: {missing}"
    cuda_only = {k: executed[k, c] for k, c in emitted if c == branch_tracer.CUDA_ONLY}
    assert not any(cuda_only.values()), f"CUDA-only code ran on tpsim: {cuda_only}"


WHERE = """\
import torch
device = torch.accelerator.current_accelerator(check_available=True)
print(device, torch.accelerator.device_count(), torch.cuda.is_available())
print(torch.ones(2).to(device).device)
"""


def test_the_simulated_runner_runs_on_tpsim(simulated_runner, tmp_path):
    program = tmp_path / "where.py"
    program.write_text(WHERE)
    proc = simulated_runner.run(program, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "tpsim 2 False\ntpsim:0\n"
