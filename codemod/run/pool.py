"""Many files: those whose bytes cannot need a rewrite are settled here, the rest
are processed in this process or by a pool of forked workers. An interrupted run
stops its workers first; no file is left half-written.

Nothing here imports libcst until a file actually needs parsing: a tree without
CUDA code costs a walk and a byte search.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from codemod.run.files import found
from codemod.run.io import NotRegularError, read_pinned, read_problem
from codemod.run.job import FileResult, Job
from codemod.run.lifetime import STOP_SIGNALS, bind_to_parent, block, unblock
from codemod.run.pinned import LinkOnTheWay, real_path
from codemod.run.prefilter import needs_parsing

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


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
    workers = min(jobs or os.cpu_count() or 1, len(todo))
    if not todo:
        return [r for r in results if r is not None]
    from codemod.run.process import process_file  # only where a file needs it

    if workers <= 1:
        with _black_helper(job, todo):
            for index in todo:
                results[index] = process_file(files[index], job)
                if progress:
                    progress(1)
    else:
        _run_pool(files, todo, job, workers, results, progress)
    return [r for r in results if r is not None]


def _black_helper(job: Job, todo: Sequence[int]):
    """Where this process rewrites files itself: black imported in a helper process
    meanwhile (``codemod.run.black_helper``), unless nothing is laid out with black."""
    if not job.format or not todo or "libcst" in sys.modules:
        import contextlib

        return contextlib.nullcontext()
    from codemod.run import black_helper

    return black_helper.started()


def _work_chunk(chunk: Sequence[Tuple[Path, Job]]) -> List[FileResult]:
    from codemod.run.process import process_file  # imported before the fork

    return [process_file(path, job) for path, job in chunk]


def _init_worker(parent: int) -> None:
    # The parent alone decides what Ctrl-C means, and stops the workers with
    # SIGTERM (deferred while one is replacing a file).
    bind_to_parent(parent)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def _stop_workers(pool: "ProcessPoolExecutor") -> None:
    """Terminate the workers now, without waiting for the files queued for them."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14+
    if terminate is not None:
        terminate()
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(5)
        if process.is_alive():
            process.kill()
    pool.shutdown(wait=False)


def _run_pool(files, todo, job, workers, results, progress) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor  # only with workers
    from concurrent.futures.process import BrokenProcessPool

    import codemod.rewrite.pipeline  # noqa: F401  (imported once, inherited by the workers)
    import codemod.run.process  # noqa: F401

    context = multiprocessing.get_context("fork")
    # A worker is forked with the parent's handlers: Ctrl-C or SIGTERM before its
    # own are set would print a traceback from it. Workers start with the two
    # blocked (the parent's are deferred until they are started) and unblock them
    # once their handlers are set.
    blocked = block(STOP_SIGNALS)
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_init_worker,
        initargs=(os.getpid(),),
    )
    try:
        size = max(1, min(8, len(todo) // (workers * 4)))
        chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
        # Futures, not pool.map: map cancels its futures when interrupted, and the
        # executor then trips over them while its workers are being stopped.
        try:
            futures = [
                pool.submit(_work_chunk, [(files[i], job) for i in chunk])
                for chunk in chunks
            ]
        finally:
            unblock(blocked)
        for chunk, future in zip(chunks, futures):
            for index, result in zip(chunk, future.result()):
                results[index] = result
                if progress:
                    progress(1)
    except BrokenProcessPool:
        # A worker died (killed, out of memory): what it had not reported is unknown,
        # and the files it was given were left untouched or rewritten whole.
        for index in todo:
            if results[index] is None:
                path = files[index]
                results[index] = FileResult(
                    str(path),
                    error=f"{path}: a worker process died; the file is untouched or fully rewritten",
                )
        _stop_workers(pool)
    except BaseException:
        _stop_workers(pool)
        raise
    else:
        pool.shutdown(wait=True)
