"""Compiling the simulator's C++ extension once per torch version and source.

The build runs in a child Python (``_compile.py``) so that building never
loads a PrivateUse1 backend into the calling process, which cannot be undone.
Its result is cached in a folder named after the torch version, the Python
version and a hash of the sources and flags; a file lock serialises builders
(pytest-xdist workers, several ``run()`` calls) and a marker file, written
last, tells a finished build from one that is under way or was killed. The
child never loads the backend through torch's autoload (it would wait for
the lock its parent holds). A new folder starts from the objects of the
newest finished build for the same torch and Python, so ninja recompiles
only the sources that changed since. Progress goes to stderr as each
translation unit finishes, and every half minute while one compiles.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

NAME = "tpsim"
CSRC = Path(__file__).with_name("csrc")
COMPILE_SCRIPT = Path(__file__).with_name("_compile.py")
# Our code only routes calls; the kernels that compute are torch's own.
CFLAGS = ["-O1"]


class SimulatorError(RuntimeError):
    """The simulator cannot be built or loaded; the message says why."""


def cache_root() -> Path:
    """$TORCHPORT_CACHE_DIR, else $XDG_CACHE_HOME/torchport, else ~/.cache/torchport."""
    if os.environ.get("TORCHPORT_CACHE_DIR"):
        return Path(os.environ["TORCHPORT_CACHE_DIR"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "torchport"


def sources() -> list[Path]:
    return sorted(CSRC.glob("*.cpp"))


def torch_version() -> str:
    if "torch" in sys.modules:
        return sys.modules["torch"].__version__
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        raise SimulatorError("torch is not installed in this Python") from None


def _key_prefix() -> str:
    python = f"py{sys.version_info[0]}{sys.version_info[1]}"
    return f"torch-{torch_version()}-{python}-"


def _inputs() -> list[Path]:
    # Only what the compiler reads (and how): a stray file in csrc/ does not
    # make a new build.
    return sorted(sorted(CSRC.glob("*.cpp")) + sorted(CSRC.glob("*.h"))) + [
        COMPILE_SCRIPT
    ]


def _input_hashes() -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in _inputs()}


def build_dir() -> Path:
    digest = hashlib.sha256(" ".join(CFLAGS).encode())
    for path in _inputs():
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return cache_root() / "simulator" / (_key_prefix() + digest.hexdigest()[:16])


def library_path() -> Path:
    return build_dir() / f"{NAME}.so"


def is_built() -> bool:
    return (build_dir() / "built.json").is_file()


@contextmanager
def _locked(path: Path):
    # flock, unlike cpp_extension's lock file, dies with a killed builder.
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _toolchain_env() -> dict[str, str]:
    env = dict(os.environ)
    # Building must not load a simulator (a torchport one, under `torchport
    # simulate`, would wait for our lock): the child imports torch only.
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    # The venv's `ninja` (pip install ninja) is found without activating it.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])
    compiler = env.get("CXX") or "c++"
    if not shutil.which(compiler, path=env["PATH"]):
        raise SimulatorError(
            f"no C++ compiler found ({compiler!r} is not on PATH): the tpsim "
            "simulator is a C++ extension; install g++ or set CXX"
        )
    if not shutil.which("ninja", path=env["PATH"]):
        raise SimulatorError(
            "ninja is not installed: torch.utils.cpp_extension needs it to build "
            "the tpsim simulator (pip install ninja)"
        )
    return env


def _reuse_objects(folder: Path) -> None:
    """Seed an empty build folder with the objects of the newest finished
    build (same torch, Python and flags) whose source and every header had
    the same content; ninja then also checks times and commands."""
    if (folder / ".ninja_log").exists():
        return
    builds = [
        d
        for d in folder.parent.glob(_key_prefix() + "*")
        if d != folder and (d / "built.json").is_file()
    ]
    if not builds:
        return
    newest = max(builds, key=lambda d: (d / "built.json").stat().st_mtime)
    try:
        record = json.loads((newest / "built.json").read_text())
    except (OSError, ValueError):
        return
    then, now = record.get("inputs") or {}, _input_hashes()
    shared = [n for n in now if not n.endswith(".cpp")]  # headers, the script
    if record.get("flags") != CFLAGS or any(then.get(n) != now[n] for n in shared):
        return
    for name in (n for n in now if n.endswith(".cpp") and then.get(n) == now[n]):
        obj = newest / (Path(name).stem + ".o")
        if obj.is_file():
            shutil.copy2(obj, folder / obj.name)  # its time, as ninja logged it
    for name in (".ninja_log", ".ninja_deps"):
        if (newest / name).is_file():
            shutil.copy2(newest / name, folder / name)


_STEP = re.compile(r"^\[(\d+)/(\d+)\].*?(?:-c \S*?([\w.-]+\.cpp)|-o (\S+\.so))")


def _progress(line: str, start: float) -> str | None:
    """A short line for ninja's "[i/n] command" lines, else None."""
    match = _STEP.match(line)
    if not match:
        return None
    done, total, source, library = match.groups()
    what = f"compiled {source}" if source else f"linked {Path(library).name}"
    return f"torchport: [{done}/{total}] {what} ({time.monotonic() - start:.0f} s)"


def _heartbeat(start: float, stop: threading.Event) -> None:
    while not stop.wait(30):
        print(
            f"torchport: still compiling ({time.monotonic() - start:.0f} s)",
            file=sys.stderr,
            flush=True,
        )


def build(verbose: bool = False) -> Path:
    """Compile the extension, or reuse the cached build; returns the library."""
    folder = build_dir()
    library = folder / f"{NAME}.so"
    marker = folder / "built.json"
    if marker.is_file():
        return library
    env = _toolchain_env()
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder / "build.lock"):
        if marker.is_file():  # another process built it while we waited
            return library
        # We hold the lock, so a leftover cpp_extension baton is stale.
        (folder / "lock").unlink(missing_ok=True)
        print(
            f"torchport: compiling the {NAME} simulator for torch {torch_version()} "
            f"(once per torch version and torchport release: a minute or two of "
            f"two CPUs, longer on a busy machine) in {folder}",
            file=sys.stderr,
            flush=True,
        )
        _reuse_objects(folder)
        start = time.monotonic()
        log = folder / "build.log"
        command = [sys.executable, str(COMPILE_SCRIPT), str(folder), NAME]
        command += [str(s) for s in sources()] + ["--"] + CFLAGS
        stop = threading.Event()
        threading.Thread(target=_heartbeat, args=(start, stop), daemon=True).start()
        with open(log, "w") as out:
            proc = subprocess.Popen(
                command,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                start_new_session=True,  # its compilers die with it (killpg)
            )
            try:
                for line in proc.stdout:  # to the log; progress or all to stderr
                    out.write(line)
                    shown = line if verbose else _progress(line, start)
                    if shown:
                        print(shown.rstrip("\n"), file=sys.stderr, flush=True)
                proc.wait()
            finally:
                stop.set()
                if proc.poll() is None:  # we were interrupted: so is the compiler
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        if proc.returncode != 0 or not library.is_file():
            raise SimulatorError(
                f"building the {NAME} simulator failed: {_first_error(log)} "
                f"(full log: {log})"
            )
        seconds = time.monotonic() - start
        temp = marker.with_suffix(f".{os.getpid()}")
        record = {"torch": torch_version(), "seconds": seconds, "flags": CFLAGS}
        temp.write_text(json.dumps(dict(record, inputs=_input_hashes())))
        os.replace(temp, marker)
        print(f"torchport: built in {seconds:.0f} s", file=sys.stderr, flush=True)
    return library


def _first_error(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return "no build log"
    for line in lines:
        if "error:" in line or "Error" in line:
            return line.strip()
    return lines[-1].strip() if lines else "no output"
