"""A simulated accelerator, ``tpsim``, to prove ported programs on a machine
without one.

``build()`` compiles (or reuses) a small C++ extension that registers the
PrivateUse1 backend; ``load()`` loads it into this process (irreversibly);
``run(argv)`` runs a command whose every Python process loads it at
``import torch`` and reports the first device error as ``path:line:`` with a
hint; ``python -m codemod.simulate -- COMMAND...`` is the CLI. Nothing here
imports torch until it is needed, nor anything else of ``codemod``.
"""

from ._build import NAME, SimulatorError, build, cache_root, is_built
from ._child import environment, run
from ._cli import main
from ._load import is_loaded, load

__all__ = [
    "NAME",
    "SimulatorError",
    "build",
    "cache_root",
    "environment",
    "is_built",
    "is_loaded",
    "load",
    "main",
    "run",
]
