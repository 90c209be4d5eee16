"""How torchport's processes end: the signals that stop a run, deferred while a
file is being replaced, and child processes (the workers, the black helper) that
never outlive their parent.

Apart from the pool and the helper because both start children that must behave
the same way, and the atomic write defers the same signals.
"""

from __future__ import annotations

import os
import signal
import sys
import time

# The signals that end a run: Ctrl-C, kill, and SIGHUP (the terminal or the ssh
# session closed). A file being replaced defers them until it is renamed.
STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
if hasattr(signal, "SIGHUP"):
    STOP_SIGNALS.add(signal.SIGHUP)
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
PARENT_CHECK_SECONDS = 1.0  # where the kernel cannot tell: how often to look


def block(signals):
    """Defer ``signals`` in this thread (a no-op where that is not supported)."""
    if hasattr(signal, "pthread_sigmask"):
        return signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    return None


def unblock(previous) -> None:
    """Restore the signal mask ``block`` returned."""
    if previous is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def bind_to_parent(parent: int) -> None:
    """In a child of ``parent``: Ctrl-C is the parent's to handle (it reaches the
    whole process group), SIGTERM ends the child, and so does the parent's death."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent(parent)


def _die_with_parent(parent: int) -> None:
    """A child whose parent is killed (SIGKILL: no chance to stop its children)
    gets SIGTERM too, so that nothing holds the parent's stdout open forever.

    Linux sends it (PR_SET_PDEATHSIG); elsewhere a thread checks the parent's pid.
    """
    if not _kernel_signals_parent_death():
        import threading

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(PARENT_CHECK_SECONDS)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=watch, daemon=True).start()
    if os.getppid() != parent:  # it died before the kernel was asked to tell
        os.kill(os.getpid(), signal.SIGTERM)


def _kernel_signals_parent_death() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
