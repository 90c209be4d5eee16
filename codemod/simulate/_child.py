"""Running a command with the simulator as every child Python's accelerator.

torch loads the entry points of group ``torch.backends`` at ``import torch``
(torch/__init__.py ``_import_device_backends``, on unless
``TORCH_DEVICE_BACKEND_AUTOLOAD=0``), which is how out-of-tree backends such as
TorchTPU and torch_npu load. ``run()`` puts a generated folder holding a
minimal ``*.dist-info`` (METADATA, entry_points.txt) and a boot module at the
front of ``PYTHONPATH``; every Python started below it (mp.spawn children,
DataLoader workers, ``python -m pytest``) then loads the simulator when it
imports torch, and installs the excepthook of ``_hints``. No sitecustomize.
A ``pytest11`` entry point gives every pytest there the plugin of
``_pytest_plugin`` (idle unless asked).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Mapping, Sequence

from ._build import NAME, build, cache_root

DIST = "torchport_tpsim_autoload-1.0.dist-info"
BOOT = "_torchport_tpsim_boot"
PYTEST_PLUGIN = "_torchport_tpsim_pytest"

_METADATA = "Metadata-Version: 2.1\nName: torchport-tpsim-autoload\nVersion: 1.0\n"
_ENTRY_POINTS = (
    f"[torch.backends]\n{NAME} = {BOOT}:autoload\n\n"
    f"[pytest11]\n{NAME} = {PYTEST_PLUGIN}\n"
)
_BOOT_SOURCE = '''\
"""Loads torchport's tpsim simulator when torch is imported (see
codemod/simulate/_child.py). Generated; do not edit."""
import os
import sys


def autoload():
    try:
        from codemod.simulate import _child
    except ImportError:  # another Python: use the torchport that made us
        sys.path.append(os.environ["TORCHPORT_SIM_HOME"])
        from codemod.simulate import _child
    _child.autoload()
'''
_PYTEST_SOURCE = '''\
"""The pytest plugin of torchport's tpsim simulator (see
codemod/simulate/_pytest_plugin.py). Generated; do not edit."""
import os
import sys

try:
    from codemod.simulate._pytest_plugin import *  # noqa: F401,F403
except ImportError:  # another Python: use the torchport that made us
    sys.path.append(os.environ["TORCHPORT_SIM_HOME"])
    from codemod.simulate._pytest_plugin import *  # noqa: F401,F403
'''


def _write(path: Path, text: str) -> None:
    # Concurrent run() calls may write the same files: replace atomically.
    if path.is_file() and path.read_text() == text:
        return
    temp = path.with_name(f".{path.name}.{os.getpid()}")
    temp.write_text(text)
    os.replace(temp, path)


def autoload_dir() -> Path:
    """The folder to put on PYTHONPATH (created on demand), one per content:
    runs of two torchport versions at once never rewrite each other's."""
    files = (_METADATA, _ENTRY_POINTS, _BOOT_SOURCE, _PYTEST_SOURCE)
    digest = hashlib.sha256("\0".join(files).encode()).hexdigest()[:12]
    folder = cache_root() / "autoload" / digest
    (folder / DIST).mkdir(parents=True, exist_ok=True)
    _write(folder / DIST / "METADATA", _METADATA)
    _write(folder / DIST / "entry_points.txt", _ENTRY_POINTS)
    _write(folder / f"{BOOT}.py", _BOOT_SOURCE)
    _write(folder / f"{PYTEST_PLUGIN}.py", _PYTEST_SOURCE)
    return folder


def environment(
    devices: int = 2,
    base: Mapping[str, str] | None = None,
    autocast_dtype: str | None = None,
) -> dict[str, str]:
    """The environment under which Pythons load the simulator at import torch;
    ``autocast_dtype`` ("float16", "bfloat16") is the device's default one."""
    env = dict(os.environ if base is None else base)
    paths = [str(autoload_dir())] + [p for p in [env.get("PYTHONPATH")] if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "1"
    env["TORCHPORT_SIM_DEVICES"] = str(devices)
    env["TORCHPORT_SIM_HOME"] = str(Path(__file__).resolve().parents[2])
    env["TORCHPORT_CACHE_DIR"] = str(cache_root())
    # What a test suite that takes its device from the environment reads.
    env["TORCHPORT_SIM_DEVICE"] = NAME
    if autocast_dtype is not None:
        env["TORCHPORT_SIM_AUTOCAST_DTYPE"] = autocast_dtype
    # Real GPUs stay hidden, so CUDA-only code fails as it would elsewhere.
    env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def run(
    argv: Sequence[str],
    devices: int = 2,
    cwd: str | os.PathLike | None = None,
    env: Mapping[str, str] | None = None,
    autocast_dtype: str | None = None,
) -> int:
    """Build (here, once), then run ``argv`` with the simulator active in its
    Pythons; returns the exit code (128 + N for a child killed by signal N)."""
    if not argv:
        raise ValueError("run() needs a command")
    from ._load import _device_count

    _device_count(devices)  # a bad count fails here, not in every child
    build()
    proc = subprocess.run(
        list(argv), cwd=cwd, env=environment(devices, env, autocast_dtype)
    )
    code = proc.returncode
    return 128 - code if code < 0 else code


def autoload() -> None:
    """Entry point torch calls at import in a child of run()."""
    import faulthandler

    from . import _hints
    from ._load import load

    # Before the library installs its fault handler, which runs first and
    # then hands a fault to this one: the explanation, then the Python lines.
    if not faulthandler.is_enabled():
        faulthandler.enable()
    load()
    _hints.install()
