"""The command line.

``main`` is imported on first use, so that a Ctrl-C while the command line is
still being imported (the first tenths of a second) ends the same way as one
during the run: one line and exit 130, no traceback.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def __getattr__(name: str):
    if name != "main":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        from codemod.cli.app import main
    except KeyboardInterrupt:
        sys.stderr.write("torchport: interrupted\n")
        raise SystemExit(130) from None
    globals()["main"] = main
    return main
