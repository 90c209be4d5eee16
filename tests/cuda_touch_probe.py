"""When does a program first query CUDA? ``python cuda_touch_probe.py < requests``.

Imports torch once, replaces every CUDA query with a recording wrapper, then forks one
child per program, which imports the program (``run_name`` is not ``"__main__"``, as
``import module`` runs it: a script without a main guard runs whole). A child records
its first query, with what the program had done before it: the writes it had printed,
the environment variables it had written (``CUDA_VISIBLE_DEVICES`` read after the
query is too late) and the processes it had forked (a fork after CUDA is initialised
fails in the child). Every later query is the same or later still.

A query is:
- a call of any function of ``torch.cuda`` (by the program, or by torch for it as
  ``Module.cuda()`` does) but those in ``NOT_QUERIES``, and
  ``torch._C._cuda_getDeviceCount`` where the build has it;
- any ``torch.accelerator`` function but ``current_accelerator()`` (a property of the
  build: torch documents it never poisons a fork) and ``device_count()`` (from torch
  2.8 it asks the device module, which for CUDA counts through NVML without
  initialising CUDA, and is documented fork-safe).

Protocol: one JSON request per line on stdin (``path``, ``cwd``); one JSON answer per
line on stdout: ``{"first": null}`` or ``{"first": {"query", "printed", "environ",
"forks"}}``.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import signal
import sys
import tempfile

GUARD_S = 300  # a hang guard, far above any fixture's import
_LOG = None  # the child's record file
# torch.cuda functions that never ask the driver: bookkeeping torch calls itself, and
# the seeding functions, which are queued until CUDA initialises.
NOT_QUERIES = {
    "is_initialized",
    "_is_compiled",
    "_is_in_bad_fork",
    "_lazy_call",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
}
_STATE = {"printed": 0, "environ": 0, "forks": 0, "inside": False}


def _record(query: str) -> None:
    if _LOG is None or _STATE["inside"] or os.path.getsize(_LOG):
        return
    fields = {k: _STATE[k] for k in ("printed", "environ", "forks")}
    with open(_LOG, "w", encoding="utf-8") as handle:
        json.dump({"query": query, **fields}, handle)


def _recording(name: str, function, allowed):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if not allowed(*args, **kwargs):
            _record(name)
        outer, _STATE["inside"] = _STATE["inside"], True
        try:
            return function(*args, **kwargs)
        finally:
            _STATE["inside"] = outer

    return wrapper


def _check_available(check_available=False):
    return not check_available


def instrument() -> None:
    import torch
    import torch.accelerator
    import torch.cuda

    assert torch.__version__ >= "2.8", "device_count() is fork-safe from torch 2.8"
    for name, value in list(vars(torch.cuda).items()):
        if inspect.isfunction(value) and name not in NOT_QUERIES:
            setattr(torch.cuda, name, _recording(f"torch.cuda.{name}", value, _never))
    if hasattr(torch._C, "_cuda_getDeviceCount"):
        count = torch._C._cuda_getDeviceCount
        torch._C._cuda_getDeviceCount = _recording(
            "_cuda_getDeviceCount", count, _never
        )
    for name, value in list(vars(torch.accelerator).items()):
        if not inspect.isfunction(value) or name == "device_count":
            continue
        allowed = _check_available if name == "current_accelerator" else None
        wrapped = _recording(f"torch.accelerator.{name}", value, allowed or _never)
        setattr(torch.accelerator, name, wrapped)


def _never(*args, **kwargs):
    return False


class _CountingStream:
    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        _STATE["printed"] += 1  # writes, not bytes: a port may word a line otherwise
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _count_side_effects() -> None:
    """In the child: count what the program prints, writes to os.environ and forks."""
    putenv, fork = os.putenv, os.fork

    def counted_putenv(key, value):
        _STATE["environ"] += 1
        return putenv(key, value)

    def counted_fork():
        _STATE["forks"] += 1
        return fork()

    sys.stdout = _CountingStream(sys.stdout)
    os.putenv, os.fork = counted_putenv, counted_fork


def _child(request: dict, log: str) -> None:
    global _LOG
    code = 0
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.chdir(request["cwd"])
        sys.argv = [request["path"]]
        sys.path[0] = os.path.dirname(os.path.abspath(request["path"]))
        _LOG = log
        _count_side_effects()
        import runpy

        try:
            runpy.run_path(request["path"], run_name="torchport_probed")
        except BaseException:  # a CUDA program may fail on the CPU: after its query
            code = 1
    finally:
        os._exit(code)


def serve() -> None:
    instrument()
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    log = os.path.join(tempfile.mkdtemp(prefix="cuda-touch-"), "first")
    for line in sys.stdin:
        request = json.loads(line)
        open(log, "w").close()
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            _child(request, log)
        _wait(pid)
        with open(log, encoding="utf-8") as handle:
            text = handle.read()
        answers.write(json.dumps({"first": json.loads(text) if text else None}) + "\n")
        answers.flush()


def _wait(pid: int) -> None:
    import select

    pidfd = os.pidfd_open(pid)
    if not select.select([pidfd], [], [], GUARD_S)[0]:
        os.killpg(pid, signal.SIGKILL)
    os.close(pidfd)
    os.waitpid(pid, 0)


if __name__ == "__main__":
    serve()
