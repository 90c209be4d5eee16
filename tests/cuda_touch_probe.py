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

Every device question is recorded too, in ``asked``: the above and
``torch.accelerator.device_count()``, whatever it initialises (on an accelerator
other than CUDA it may start the runtime). A module that asked none at import must
ask none once ported: the accessor's promise is that the device is found on first
use. ``current_accelerator()`` without ``check_available`` is no question: it is the
build's answer, asked of no device (the AMP form a decorator gets at import).

Protocol: one JSON request per line on stdin (``path``, ``cwd``); one JSON answer per
line on stdout: ``{"first": null, "asked": null, "raised": false}`` or ``{"first":
{"query", "printed", "environ", "forks"}, "asked": QUERY, "raised": true}``
(``asked``: the first device question of any kind; ``raised``: the import raised,
as a CUDA program does on the CPU, in torch's compiled code for ``x.cuda()``,
before any question the probe sees).
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
_ASKED = None  # the child's record of its first device question of any kind
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
    _note_asked(query)
    fields = {k: _STATE[k] for k in ("printed", "environ", "forks")}
    with open(_LOG, "w", encoding="utf-8") as handle:
        json.dump({"query": query, **fields}, handle)


def _note_asked(query: str) -> None:
    if _ASKED is None or _STATE["inside"] or os.path.getsize(_ASKED):
        return
    with open(_ASKED, "w", encoding="utf-8") as handle:
        handle.write(query)


def _recording(name: str, function, kind):
    """``function`` recorded as ``kind(*args, **kwargs)`` says: "query" (of CUDA),
    "asked" (a device question that initialises nothing) or None (no question)."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        said = kind(*args, **kwargs)
        if said == "query":
            _record(name)
        elif said == "asked":
            _note_asked(name)
        outer, _STATE["inside"] = _STATE["inside"], True
        try:
            return function(*args, **kwargs)
        finally:
            _STATE["inside"] = outer

    return wrapper


def _build_answer(check_available=False):
    return "query" if check_available else None


def instrument() -> None:
    import torch
    import torch.accelerator
    import torch.cuda

    assert torch.__version__ >= "2.8", "device_count() is fork-safe from torch 2.8"
    for name, value in list(vars(torch.cuda).items()):
        if inspect.isfunction(value) and name not in NOT_QUERIES:
            setattr(torch.cuda, name, _recording(f"torch.cuda.{name}", value, _query))
    if hasattr(torch._C, "_cuda_getDeviceCount"):
        count = torch._C._cuda_getDeviceCount
        torch._C._cuda_getDeviceCount = _recording(
            "_cuda_getDeviceCount", count, _query
        )
    for name, value in list(vars(torch.accelerator).items()):
        if not inspect.isfunction(value):
            continue
        kind = {"current_accelerator": _build_answer, "device_count": _asked}
        wrapped = _recording(f"torch.accelerator.{name}", value, kind.get(name, _query))
        setattr(torch.accelerator, name, wrapped)


def _query(*args, **kwargs):
    return "query"


def _asked(*args, **kwargs):
    return "asked"


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
    global _LOG, _ASKED
    code = 0
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.chdir(request["cwd"])
        sys.argv = [request["path"]]
        sys.path[0] = os.path.dirname(os.path.abspath(request["path"]))
        _LOG, _ASKED = log, log + ".asked"
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
        open(log + ".asked", "w").close()
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            _child(request, log)
        raised = _wait(pid) != 0
        with open(log, encoding="utf-8") as handle:
            text = handle.read()
        with open(log + ".asked", encoding="utf-8") as handle:
            asked = handle.read() or None
        first = json.loads(text) if text else None
        answer = {"first": first, "asked": asked, "raised": raised}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


def _wait(pid: int) -> int:
    import select

    pidfd = os.pidfd_open(pid)
    if not select.select([pidfd], [], [], GUARD_S)[0]:
        os.killpg(pid, signal.SIGKILL)
    os.close(pidfd)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


if __name__ == "__main__":
    serve()
