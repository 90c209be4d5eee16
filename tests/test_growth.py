"""torchport's cost grows linearly with its input, shape by shape.

The shapes are ``scripts/growth.py``'s (a file of about N bytes that grows one way).
Work is counted, not timed where a count exists: the calls made (Python functions
and builtins, as ``sys.setprofile`` reports them) while a worker rewrites the file
at N bytes and at 2N. Linear work doubles; a step that looks at every earlier
statement again for each statement more than doubles it, and by more the larger N.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from codemod.model.options import Options
from codemod.passes.names import ModuleFacts, device_flags
from codemod.run.job import WRITE, Job
from codemod.run.process import process_source, too_much

ROOT = Path(__file__).resolve().parent.parent
_SPEC = importlib.util.spec_from_file_location("growth", ROOT / "scripts" / "growth.py")
growth = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(growth)

JOB = Job(WRITE, Options(target_torch=(2, 10)))
LINEAR = 2.15  # the most that doubling the input may multiply the work by


def calls(source: str) -> int:
    """The calls made rewriting ``source`` (after a warm-up: imports are not counted)."""
    process_source("warm.py", b"import torch\nx = torch.ones(1).cuda()\n", JOB)
    results = []
    count = _calls_of(
        lambda: results.append(process_source("shape.py", source.encode(), JOB))
    )
    assert results[0].error is None and results[0].changed
    return count


def growth_of(shape: str, size: int) -> float:
    make = growth.SHAPES[shape]
    calls(make(size // 4))  # what the shape sets up once (black, caches)
    return calls(make(2 * size)) / calls(make(size))


@pytest.mark.parametrize(
    "shape, size",
    [
        ("assignments", 20_000),  # each statement judged for what follows it
        ("sites", 6_000),  # one chunk of many statements, each reported and moved
        ("device_strings", 6_000),  # each an early read of the device
        ("one_function", 6_000),  # one function whose lines all hold sites
        ("site_functions", 6_000),
        ("guards", 3_000),
    ],
)
def test_work_doubles_when_the_input_doubles(shape, size):
    assert growth_of(shape, size) < LINEAR


@pytest.mark.parametrize("shape", ["comments", "docstring"])
def test_lines_outside_the_statements_and_in_a_string_cost_no_step_each(shape):
    """Comment lines between statements, and the lines of a docstring, are copied
    as a run and searched as part of one text: no call a line (hits were looked up
    a line at a time, and the output put together a line at a time)."""
    assert growth_of(shape, 100_000) < 1.2


def _best_time(function, *args) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        function(*args)
        best = min(best, time.process_time() - started)
    return best


def test_module_facts_grow_linearly_with_the_statements():
    """Read once per statement, the names bound so far were copied for each (a C
    loop, which no count of calls sees): timed, with a generous bound (linear is
    2, that copy made it 4)."""
    small, large = (
        (ast.parse(text), text)
        for text in (growth.assignments(100_000), growth.assignments(200_000))
    )
    ratio = _best_time(ModuleFacts.of, *large) / _best_time(ModuleFacts.of, *small)
    assert ratio < 3


def _calls_of(function, *args) -> int:
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        function(*args)
    finally:
        sys.setprofile(None)
    return count


def test_a_long_string_is_scanned_for_the_bounds_in_little_memory():
    """The bounds' scan found a string's end with one pattern over its whole body,
    which keeps a backtracking entry per character: 120 bytes of memory for each
    byte of a docstring (6.2 GB for 50 MB)."""
    source = growth.docstring(2_000_000)
    tracemalloc.start()
    try:
        too_much(source)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * len(source)


def test_a_run_of_comment_lines_is_scanned_for_the_bounds_in_one_step():
    """Comment lines are passed over up to the next line of code in one search: the
    scan's work does not grow with them (it took a step a line)."""
    small, large = (growth.comments(n) for n in (200_000, 400_000))
    assert _calls_of(too_much, large) < 1.1 * _calls_of(too_much, small)


_M = 100_000  # codemod.run.limits.MAX_STATEMENT_CHARS


@pytest.mark.parametrize(
    "text, statement",
    [
        ("x = 1  # " + "c" * _M + " cuda\n", "line 1 is 100,015"),
        ("import torch\n# " + "cuda" * 30000 + "\ny = 2\n", "line 2 is 120,003"),
        ("x = (1,\n" + "# cuda\n" * 30000 + ")\n", "lines 1-30002 is 210,010"),
        ("# cuda\n" * 30000 + "x = 1\n", None),
        ("x = 1\n" + "# cuda\n" * 20000 + "# " + "cuda" * 30000, "line 20002 is"),
        ("x = 1\n# c\n\r  y = '''\n" + "cuda\n" * 30000 + "'''\n", "lines 3-30004 is"),
    ],
    ids=["trailing", "own-line", "in-brackets", "short-lines", "at-end", "carriage"],
)
def test_runs_of_comments_bound_the_statements_they_did(text, statement):
    """A run of comment lines is one step of the scan, and still each of its lines
    is a logical line of its own (one inside brackets is part of the statement)."""
    problem = too_much(text)
    if statement is None:
        assert problem is None
    else:
        assert f"the statement on {statement}" in problem


@pytest.mark.slow
def test_data_beside_a_site_costs_memory_in_proportion_to_its_size():
    """``ast`` read every item of the literal, 460 bytes of memory for each byte of
    ``DATA = [1, 1, ...]``; the data it does not read costs a few copies of it."""
    source = growth.data_literal(2_000_000)
    process_source("warm.py", b"import torch\nx = torch.ones(1).cuda()\n", JOB)
    tracemalloc.start()
    try:
        result = process_source("data.py", source.encode(), JOB)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.changed and peak < 40 * len(source)


def test_device_choices_are_numbered_in_time_linear_in_the_file():
    """The line of each ``"cuda" if F else "cpu"`` was counted from the start of the
    file (a C loop, which no count of calls sees): timed, with a generous bound."""

    def source(n: int) -> str:
        return "".join(f'd{i} = "cuda" if c else "cpu"\n' for i in range(n))

    small, large = (
        (ast.parse(text), text) for text in (source(10_000), source(20_000))
    )
    ratio = _best_time(device_flags, *large) / _best_time(device_flags, *small)
    assert ratio < 3


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["comments", "docstring"])
def test_comments_and_docstrings_cost_a_few_copies_of_their_size(shape):
    """Memory stays a small multiple of the file (a docstring's scan for the bounds
    took 120 times its size, a file of comment lines 30 times)."""
    source = growth.SHAPES[shape](1_000_000)
    process_source("warm.py", b"import torch\nx = torch.ones(1).cuda()\n", JOB)
    tracemalloc.start()
    try:
        result = process_source("shape.py", source.encode(), JOB)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.changed and peak < 15 * len(source)
