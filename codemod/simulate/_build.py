"""Compiling the simulator's C++ extension once per torch version and source.

The build runs in a child Python (``_compile.py``) so that building never
loads a PrivateUse1 backend into the calling process, which cannot be undone.
Its result is cached in a folder named after the torch version, the Python
version and a hash of the sources and flags; a file lock serialises builders
(pytest-xdist workers, several ``run()`` calls) and a marker file, written
last, tells a finished build from one that is under way or was killed.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
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


def build_dir() -> Path:
    digest = hashlib.sha256(" ".join(CFLAGS).encode())
    for path in sorted(CSRC.iterdir()) + [COMPILE_SCRIPT]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    python = f"py{sys.version_info[0]}{sys.version_info[1]}"
    key = f"torch-{torch_version()}-{python}-{digest.hexdigest()[:16]}"
    return cache_root() / "simulator" / key


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
            f"(once per torch version, about a minute) in {folder}",
            file=sys.stderr,
            flush=True,
        )
        start = time.monotonic()
        log = folder / "build.log"
        command = [sys.executable, str(COMPILE_SCRIPT), str(folder), NAME]
        command += [str(s) for s in sources()] + ["--"] + CFLAGS
        with open(log, "w") as out:
            proc = subprocess.Popen(
                command,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
            )
            for line in proc.stdout:  # to the log, and to stderr if verbose
                out.write(line)
                if verbose:
                    sys.stderr.write(line)
            proc.wait()
        if proc.returncode != 0 or not library.is_file():
            raise SimulatorError(
                f"building the {NAME} simulator failed: {_first_error(log)} "
                f"(full log: {log})"
            )
        seconds = time.monotonic() - start
        temp = marker.with_suffix(f".{os.getpid()}")
        temp.write_text(json.dumps({"torch": torch_version(), "seconds": seconds}))
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
