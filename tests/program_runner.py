"""Run many small Python programs as ``python PROGRAM`` would, importing torch once.

A fresh interpreter per program pays for ``import torch`` every time (seconds each).
Instead one runner process imports torch and numpy (without running anything on them,
so no intra-op thread pool exists yet), then forks one child per program.  Each child:

- runs the program as ``__main__`` in a fresh module namespace (``runpy.run_path``),
- in its own working directory, with its own ``sys.argv`` and ``sys.path[0]``,
- with stdin from /dev/null and stdout/stderr captured at the file-descriptor level,
- in its own session, so a hang is ended with every process it started.

Its exit status comes back as ``subprocess`` reports it: the exit code, or minus the
signal that killed it.  A program still running after ``HANG_GUARD_S`` is killed; that
limit is a guard against hangs, not a speed requirement.

Protocol: one JSON request per line on the runner's stdin (``path``, ``cwd``, ``argv``,
and ``trace``: a folder, or null), one JSON answer per line on its stdout
(``returncode``, ``stdout``, ``stderr``, ``hung``).

``run(..., trace=True)`` runs the program instrumented by tests/branch_tracer.py instead
(the same output, plus counters at the accelerator branches it holds); the result's
``hits`` maps each site's index to how often the run reached it (``None`` untraced).
A runner started with ``codemod.simulate.environment()`` runs every program on the
simulated accelerator.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional, Sequence

HANG_GUARD_S = (
    600  # ten minutes: far above any fixture program, even on a loaded machine
)


_STARTS_PROCESSES = "mp.spawn("
TRACER = Path(__file__).with_name("branch_tracer.py")


class ProgramRunner:
    """The test side: starts the runner and sends it programs, one at a time."""

    def __init__(self, env: dict):
        self._env = env
        self._proc = subprocess.Popen(
            [sys.executable, __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            encoding="utf-8",
        )

    def run(
        self,
        program: Path,
        cwd: Path,
        argv: Optional[Sequence[str]] = None,
        trace: bool = False,
    ) -> subprocess.CompletedProcess:
        hits = tempfile.mkdtemp(prefix="program-hits-") if trace else None
        try:
            if _STARTS_PROCESSES in program.read_text(encoding="utf-8"):
                proc = self._run_fresh(program, cwd, argv, hits)
            else:
                proc = self._run_forked(program, cwd, argv, hits)
            proc.hits = _read_hits(hits) if trace else None
        finally:
            if hits:
                shutil.rmtree(hits, ignore_errors=True)
        return proc

    def _run_forked(
        self, program: Path, cwd: Path, argv: Optional[Sequence[str]], hits
    ) -> subprocess.CompletedProcess:
        request = {
            "path": str(program),
            "cwd": str(cwd),
            "argv": list(argv) if argv is not None else [str(program)],
            "trace": hits,
        }
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(
                f"the program runner exited ({self._proc.wait()}) while running {program}"
            )
        answer = json.loads(line)
        stderr = answer["stderr"]
        if answer["hung"]:
            stderr += f"\n[killed: still running after {HANG_GUARD_S} s]\n"
        return subprocess.CompletedProcess(
            request["argv"], answer["returncode"], answer["stdout"], stderr
        )

    def _run_fresh(
        self, program: Path, cwd: Path, argv: Optional[Sequence[str]], hits=None
    ) -> subprocess.CompletedProcess:
        """A program that starts processes of its own runs as ``python PROGRAM``:
        in a child forked from the runner, a worker ``mp.spawn`` started sometimes
        aborted at exit ("terminate called without an active exception"; 3 full
        suites in 9 on a loaded machine), which it never did run on its own. Traced,
        it runs as ``python branch_tracer.py --hits DIR PROGRAM ...``, which traces the
        processes it spawns too."""
        args = [sys.executable, str(program), *(list(argv or [])[1:])]
        if hits:
            args[1:1] = [str(TRACER), "--hits", hits]
        try:
            return subprocess.run(
                args,
                cwd=cwd,
                env=self._env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=HANG_GUARD_S,
            )
        except subprocess.TimeoutExpired as error:
            stderr = (error.stderr or b"").decode("utf-8", "replace")
            stderr += f"\n[killed: still running after {HANG_GUARD_S} s]\n"
            return subprocess.CompletedProcess(args, -9, "", stderr)

    def close(self) -> None:
        self._proc.stdin.close()
        self._proc.wait()
        self._proc.stdout.close()


def _read_hits(folder: str) -> dict:
    return _tracer().read_hits(folder)


def _tracer():
    """tests/branch_tracer.py, loaded by its path (a program's sys.path is its own)."""
    import importlib.util

    name = "_torchport_branch_tracer"  # branch_tracer.MODULE
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, TRACER)
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


# -- the runner process ------------------------------------------------------------------
def _exit_code(error: SystemExit) -> int:
    """What the interpreter would exit with for ``sys.exit(error.code)``."""
    if error.code is None:
        return 0
    if isinstance(error.code, int):
        return error.code
    print(error.code, file=sys.stderr)
    return 1


def _child(request: dict, out_path: str, err_path: str, protocol: int) -> None:
    """Run the program in this forked process and never return."""
    code = 1
    try:
        os.setsid()
        os.close(protocol)
        for fd, path, flags in (
            (0, os.devnull, os.O_RDONLY),
            (1, out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
            (2, err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        ):
            opened = os.open(path, flags, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        sys.stdin = open(0, closefd=False)
        os.chdir(request["cwd"])
        sys.argv = request["argv"]
        sys.path[0] = os.path.dirname(os.path.abspath(request["path"]))
        import runpy
        import traceback

        try:
            if request.get("trace"):
                _tracer().run_traced(request["path"], request["trace"])
            else:
                runpy.run_path(request["path"], run_name="__main__")
            code = 0
        except SystemExit as error:
            code = _exit_code(error)
        except BaseException:
            traceback.print_exc()
            code = 1
        import atexit

        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _wait(pid: int) -> tuple:
    """(returncode, hung): wait for the child, killing its session after the guard."""
    import select

    hung = False
    pidfd = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
    if pidfd is not None:
        ready, _, _ = select.select([pidfd], [], [], HANG_GUARD_S)
        os.close(pidfd)
        if not ready:
            hung = True
            os.killpg(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), hung


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def serve() -> None:
    import numpy  # noqa: F401  (imported once here, inherited by every program)
    import torch  # noqa: F401

    protocol_in = sys.stdin
    protocol_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # a stray print must not corrupt the answers
    scratch = tempfile.mkdtemp(prefix="program-runner-")
    out_path, err_path = os.path.join(scratch, "out"), os.path.join(scratch, "err")
    try:
        for line in protocol_in:
            request = json.loads(line)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(request, out_path, err_path, protocol_out.fileno())
            returncode, hung = _wait(pid)
            answer = {
                "returncode": returncode,
                "stdout": _read(out_path),
                "stderr": _read(err_path),
                "hung": hung,
            }
            protocol_out.write(json.dumps(answer) + "\n")
            protocol_out.flush()
    finally:
        for path in (out_path, err_path):
            if os.path.exists(path):
                os.remove(path)
        os.rmdir(scratch)


if __name__ == "__main__":
    serve()
