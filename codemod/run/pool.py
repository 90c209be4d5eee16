"""Many files: those whose bytes cannot need a rewrite are settled here, the rest
are processed by forked workers (``workers``), one of them when the run has one
file or ``--jobs 1``. A worker that crashes costs the file it was on, never the
run; an interrupted run stops its workers first; no file is left half-written.

Nothing here imports libcst until a file actually needs parsing: a tree without
CUDA code costs a walk and a byte search.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import List, Optional, Sequence

from codemod.run.files import found
from codemod.run.io import NotRegularError, read_pinned, read_problem
from codemod.run.job import FileResult, Job
from codemod.run.lifetime import STOP_SIGNALS, bind_to_parent
from codemod.run.pinned import LinkOnTheWay, real_path
from codemod.run.prefilter import needs_parsing
from codemod.run.workers import run_workers


def run(
    files: Sequence[Path], job: Job, jobs: Optional[int] = None, progress=None
) -> List[FileResult]:
    """Process ``files``; results come back in the order of ``files``.

    Files whose bytes cannot need a rewrite are settled here without a worker.
    An interrupt (KeyboardInterrupt, SystemExit) stops the workers before it
    propagates; a file is then either untouched or completely rewritten.
    """
    # Where each file is, settled now: a folder swapped for a link later is not
    # followed (the command line's files carry where discovery found them).
    files = [p if hasattr(p, "real") else found(p, real_path(p)) for p in files]
    results: List[Optional[FileResult]] = [None] * len(files)
    todo: List[int] = []
    for index, path in enumerate(files):
        try:
            data, _ = read_pinned(path)
        except (OSError, NotRegularError, LinkOnTheWay) as error:
            results[index] = FileResult(
                str(path), error=f"{path}: {read_problem(error)}"
            )
            continue
        if needs_parsing(data):
            todo.append(index)
        else:
            results[index] = FileResult(str(path))
            if progress:
                progress(1)
    if not todo:
        return [r for r in results if r is not None]
    count = min(jobs or os.cpu_count() or 1, len(todo))

    def work(index: int) -> FileResult:  # in a worker
        from codemod.run.process import process_file

        return process_file(files[index], job)

    def died(index: int, how: str) -> FileResult:
        path = files[index]
        return FileResult(
            str(path),
            error=f"{path}: a worker process died on this file ({how}); the file is"
            " untouched or fully rewritten",
        )

    def done(index: int, result: FileResult) -> None:
        results[index] = result
        if progress:
            progress(1)

    if count <= 1:
        with _black_helper(job, todo):
            run_workers(1, todo, work, died, done, _start_worker, _forget_black_helper)
    else:
        import codemod.rewrite.pipeline  # noqa: F401  (imported once, inherited by the workers)
        import codemod.run.process  # noqa: F401

        run_workers(count, todo, work, died, done, _start_worker)
    return [r for r in results if r is not None]


def _start_worker(parent: int) -> None:
    _init_worker(parent)  # looked up when called: tests replace it


def _init_worker(parent: int) -> None:
    # The parent alone decides what Ctrl-C means, and stops the workers with
    # SIGTERM (deferred while one is replacing a file). Workers start with the stop
    # signals blocked, and unblock them once their handlers are set.
    bind_to_parent(parent)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def _black_helper(job: Job, todo: Sequence[int]):
    """Where one worker rewrites the files: black imported in a helper process
    meanwhile (``codemod.run.black_helper``), unless nothing is laid out with black."""
    if not job.format or not todo or "libcst" in sys.modules:
        import contextlib

        return contextlib.nullcontext()
    from codemod.run import black_helper

    return black_helper.started()


def _forget_black_helper() -> None:
    """A worker died, maybe in the middle of a request to the helper: the workers
    forked after it run black themselves."""
    from codemod.run import black_helper

    helper, black_helper.running = black_helper.running, None
    if helper is not None:
        helper.stop()
