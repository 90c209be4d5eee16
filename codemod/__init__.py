"""torchport: rewrite CUDA-specific PyTorch code into device-portable code."""

import os
import sys

__version__ = "0.2.0"


def _interrupted(kind, value, traceback, _default=sys.excepthook):
    """Ctrl-C while Python is still importing the command line (before it can catch
    anything): one line and exit 130, as at any later moment, not a traceback."""
    if not issubclass(kind, KeyboardInterrupt):
        return _default(kind, value, traceback)
    try:
        sys.stderr.write("torchport: interrupted\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        pass
    os._exit(130)


sys.excepthook = _interrupted
