"""Forked worker processes whose crash costs one file: the one it was processing.

Each worker is handed one file at a time (its index in the run's list, over a
pipe) and sends each result back as soon as it has it, so the parent always knows
which file a worker is on. A worker that dies (a segmentation fault in a native
parser, the out-of-memory killer) costs that file, reported with how the worker
ended; the files it had been handed besides go to the other workers, and a new
worker takes its place. The files and the job are inherited through the fork:
nothing but indices and results crosses a pipe.

SIGINT is the parent's (it stops the workers with SIGTERM, which a worker defers
while it replaces a file); a worker dies with its parent (``lifetime``).
"""

from __future__ import annotations

import os
import pickle
import selectors
import signal
import struct
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Deque, Dict, List, Optional, Sequence

from codemod.run.lifetime import STOP_SIGNALS, block, unblock

_INDEX = struct.Struct("!q")  # a task: the file's index; -1: no more
_SIZE = struct.Struct("!Q")  # a result: its pickle's size, then the pickle
AHEAD = 2  # files handed to a worker before its first result comes back
STOP_GRACE_S = 5.0  # how long a stopped worker may take to finish its write


@dataclass
class _Worker:
    pid: int
    tasks: int  # write end of its task pipe
    results: int  # read end of its result pipe
    handed: Deque[int] = field(default_factory=deque)
    buffer: bytearray = field(default_factory=bytearray)


def run_workers(
    count: int,
    todo: Sequence[int],
    work: Callable[[int], object],
    died: Callable[[int, str], object],
    done: Callable[[int, object], None],
    init: Callable[[int], None],
    on_death: Optional[Callable[[], None]] = None,
) -> None:
    """``work(i)`` for each ``i`` in ``todo``, in ``count`` forked workers;
    ``done(i, result)`` in this process as each result arrives. The file a worker
    died on gets ``done(i, died(i, how))``; ``on_death()`` runs once a worker has
    died, before any other is forked. A worker first calls ``init(parent pid)``,
    which must set its signal handlers and unblock ``STOP_SIGNALS``."""
    pending: Deque[int] = deque(todo)
    workers: Dict[int, _Worker] = {}
    selector = selectors.DefaultSelector()
    try:
        for _ in range(min(count, len(pending))):
            _start(work, init, workers, selector)
        for depth in range(1, AHEAD + 1):  # one file each first, then the next
            for worker in list(workers.values()):
                _hand(worker, pending, depth)
        while workers:
            for key, _ in selector.select():
                worker = key.data
                chunk = _read(worker.results)
                if chunk:
                    worker.buffer += chunk
                    for result in _complete(worker):
                        done(worker.handed.popleft(), result)
                        _hand(worker, pending)
                    continue
                _retire(worker, workers, selector, pending, died, done)
                if on_death is not None:
                    on_death()
                    on_death = None
                if pending and len(workers) < count:
                    replacement = _start(work, init, workers, selector)
                    _hand(replacement, pending)
    except BaseException:
        _stop(workers.values())
        raise
    finally:
        selector.close()


def _start(work, init, workers: Dict[int, _Worker], selector) -> _Worker:
    """Fork a worker; it starts with the stop signals blocked until its own
    handlers are set (a signal in between would print the parent's traceback)."""
    task_read, task_write = os.pipe()
    result_read, result_write = os.pipe()
    parent = os.getpid()
    pid = -1
    blocked = block(STOP_SIGNALS)
    try:
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            code = 1
            try:
                for other in workers.values():  # the other workers' pipes
                    os.close(other.tasks)
                    os.close(other.results)
                os.close(task_write)
                os.close(result_read)
                init(parent)
                _serve(work, task_read, result_write)
                code = 0
            finally:
                os._exit(code)  # never the parent's exit handlers or buffers
    except OSError:
        for fd in (task_read, task_write, result_read, result_write):
            os.close(fd)
        raise
    finally:
        if pid != 0:
            unblock(blocked)
    os.close(task_read)
    os.close(result_write)
    worker = _Worker(pid, task_write, result_read)
    workers[pid] = worker
    selector.register(result_read, selectors.EVENT_READ, worker)
    return worker


def _serve(work, tasks: int, results: int) -> None:
    with os.fdopen(tasks, "rb") as requests, os.fdopen(results, "wb") as replies:
        while True:
            raw = requests.read(_INDEX.size)
            if len(raw) < _INDEX.size:
                return
            (index,) = _INDEX.unpack(raw)
            if index < 0:
                return
            data = pickle.dumps(work(index), protocol=pickle.HIGHEST_PROTOCOL)
            replies.write(_SIZE.pack(len(data)) + data)
            replies.flush()


def _hand(worker: _Worker, pending: Deque[int], ahead: int = AHEAD) -> None:
    """Keep the worker ``ahead`` files ahead; tell it to stop when none are left."""
    try:
        while pending and len(worker.handed) < ahead:
            index = pending.popleft()
            worker.handed.append(index)
            os.write(worker.tasks, _INDEX.pack(index))
        if not pending and not worker.handed:
            os.write(worker.tasks, _INDEX.pack(-1))
    except BrokenPipeError:  # it has just died: its result pipe says so next
        pass


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 16)
    except OSError:
        return b""


def _complete(worker: _Worker) -> List[object]:
    """The results whose bytes have all arrived, taken off the buffer."""
    results = []
    buffer = worker.buffer
    while len(buffer) >= _SIZE.size:
        (size,) = _SIZE.unpack_from(buffer)
        if len(buffer) < _SIZE.size + size:
            break
        results.append(pickle.loads(bytes(buffer[_SIZE.size : _SIZE.size + size])))
        del buffer[: _SIZE.size + size]
    return results


def _retire(worker, workers, selector, pending, died, done) -> None:
    """A worker's result pipe closed: it has ended, normally or not."""
    selector.unregister(worker.results)
    os.close(worker.results)
    os.close(worker.tasks)
    del workers[worker.pid]
    _, status = os.waitpid(worker.pid, 0)
    if worker.handed:  # it died on the first file it had not answered for
        index = worker.handed.popleft()
        pending.extendleft(reversed(worker.handed))
        done(index, died(index, _how(status)))


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"killed by {name}"
    return f"exit status {os.WEXITSTATUS(status) if os.WIFEXITED(status) else status}"


def _stop(workers) -> None:
    """Terminate the workers now (each defers SIGTERM while it replaces a file),
    and wait for them; one that does not end in time is killed."""
    workers = list(workers)
    for worker in workers:
        for fd in (worker.tasks, worker.results):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.kill(worker.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + STOP_GRACE_S
    for worker in workers:
        while True:
            try:
                pid, _ = os.waitpid(worker.pid, os.WNOHANG)
            except ChildProcessError:
                break
            if pid:
                break
            if time.monotonic() > deadline:
                os.kill(worker.pid, signal.SIGKILL)
                os.waitpid(worker.pid, 0)
                break
            time.sleep(0.01)
