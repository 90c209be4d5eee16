#!/usr/bin/env python
"""How many edits made while torchport rewrites a file are lost, and how long the
window that remains is.

Usage::

    python scripts/concurrent_edits.py [--trials 300] [--timings 2000]

Two measurements, on a file in a temporary folder:

``provoked edits``  each trial reads the file as torchport does, rewrites it, and
                    calls ``io.write_atomic``, while another process edits the
                    file in place once, at a random moment of the write (from the
                    start of ``write_atomic`` to just after the rename; the length
                    of that span is measured first). Afterwards the file must hold
                    the edit, or torchport must have refused to write it: an edit
                    that is in neither is lost. A lost edit is told apart when the
                    editor opened the file before the rename and wrote after it:
                    its write went to the file the rename replaced, which no
                    check before a rename can see.
``window``          the time from the start of the last check (the ``lstat``
                    compared with the stat taken at read time) to the end of the
                    rename, over ``--timings`` writes: an edit by a program that
                    takes no lock, landing in it, is lost.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codemod.run import process  # noqa: E402
from codemod.run.io import FileChangedError, read_regular, write_atomic  # noqa: E402
from codemod.run.job import WRITE, Job  # noqa: E402
from codemod.model.options import Options  # noqa: E402

SOURCE = "import torch\n\nx = torch.ones(2).cuda()\nn = 0  # edit 000000\n"


def _prepare(target: Path):
    target.write_text(SOURCE)
    # Written an hour ago, as a file torchport reads usually was: an edit now gets
    # another mtime even where the file system counts time in coarse ticks.
    hour_ago = time.time_ns() - 3600 * 10**9
    os.utime(target, ns=(hour_ago, hour_ago))
    data, before = read_regular(target)
    job = Job(WRITE, Options(), False)
    output = process.process_source(str(target), data, job, target).output
    return data, before, output


def _editor(path: str, go, done, delays, log) -> None:
    """Edit ``path`` in place once per trial, ``delay`` seconds after ``go``; log
    when the open started and when the write ended."""
    for delay in iter(delays.get, None):
        go.wait()
        deadline = time.perf_counter() + delay
        while time.perf_counter() < deadline:
            pass  # a busy wait: sleeping is far coarser than the window
        opened = time.monotonic_ns()
        fd = os.open(path, os.O_RDWR)
        text = os.read(fd, 1 << 16)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, text.replace(b"edit 000000", b"edit 999999"))
        wrote = time.monotonic_ns()
        os.close(fd)
        log.put((opened, wrote))
        done.set()


def _write_span(target: Path, repeats: int = 50) -> float:
    spans = []
    for _ in range(repeats):
        data, before, output = _prepare(target)
        started = time.perf_counter()
        write_atomic(target, output, data, before)
        spans.append(time.perf_counter() - started)
    return statistics.median(spans)


def provoked(folder: Path, trials: int):
    target = folder / "edited.py"
    span = _write_span(target)
    context = multiprocessing.get_context("fork")
    go, done, delays, log = (
        context.Event(),
        context.Event(),
        context.Queue(),
        context.Queue(),
    )
    editor = context.Process(target=_editor, args=(str(target), go, done, delays, log))
    editor.start()
    real_replace = os.replace
    renamed = {}

    def replace(*args, **kwargs):
        renamed["start"] = time.monotonic_ns()
        real_replace(*args, **kwargs)
        renamed["end"] = time.monotonic_ns()

    outcome = {
        "refused": 0,
        "edit kept": 0,
        "lost: the editor opened the file before the rename, wrote after it": 0,
        "lost: other": 0,
    }
    os.replace = replace
    try:
        for _ in range(trials):
            data, before, output = _prepare(target)
            go.clear()
            done.clear()
            renamed.clear()
            delays.put(random.uniform(0, span * 1.2))
            go.set()
            try:
                write_atomic(target, output, data, before)
                written = True
            except FileChangedError:
                written = False
            done.wait()
            opened, wrote = log.get()
            if not written:
                outcome["refused"] += 1
            elif "edit 999999" in target.read_text():
                outcome["edit kept"] += 1  # the edit came after the rename
            elif opened < renamed["start"] and wrote > renamed["end"]:
                # it wrote into the file the rename had just replaced
                outcome[list(outcome)[2]] += 1
            else:
                outcome["lost: other"] += 1
    finally:
        os.replace = real_replace
        delays.put(None)
        go.set()
        editor.join()
    return span, outcome


def window(folder: Path, timings: int):
    target = folder / "timed.py"
    real_lstat, real_replace = os.lstat, os.replace
    marks = {}

    def lstat(path, *args, **kwargs):
        marks["check"] = time.perf_counter_ns()
        return real_lstat(path, *args, **kwargs)

    def replace(*args, **kwargs):
        real_replace(*args, **kwargs)
        marks["renamed"] = time.perf_counter_ns()

    os.lstat, os.replace = lstat, replace
    try:
        spans = []
        for _ in range(timings):
            data, before, output = _prepare(target)
            write_atomic(target, output, data, before)
            spans.append((marks["renamed"] - marks["check"]) / 1000)
    finally:
        os.lstat, os.replace = real_lstat, real_replace
    spans.sort()
    return {
        "median": statistics.median(spans),
        "p99": spans[int(len(spans) * 0.99) - 1],
        "max": spans[-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=300)
    parser.add_argument("--timings", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        span, outcome = provoked(Path(folder), args.trials)
        print(
            f"provoked edits: {args.trials} (one per write, at a random moment of the"
            f" {span * 1e6:.0f} us write_atomic span):"
            + ";".join(f" {name} {count}" for name, count in outcome.items())
        )
        times = window(Path(folder), args.timings)
        print(
            f"window from the last check to the end of the rename, {args.timings}"
            " writes (us): "
            + ", ".join(f"{name} {value:.1f}" for name, value in times.items())
        )


if __name__ == "__main__":
    main()
