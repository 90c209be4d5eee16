"""black in a helper process, imported there while this process imports libcst.

A run with one file to rewrite would pay the two imports one after the other:
libcst's (about 0.15 s), then black's (about 0.09 s) once a changed statement needs
laying out. Forked before libcst is imported, a helper imports black on another core
meanwhile, and formats what it is sent: the same black called with the same
arguments, so the same text comes back. Whatever goes wrong with the helper (it
could not start, it died) makes black run in this process, as it would have.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
from typing import Iterator, List, Optional, Tuple

from codemod.run.lifetime import bind_to_parent

running: Optional["BlackHelper"] = None  # the helper of the run in progress

# The helper reaches black through ``formatting.Layout.helper``: ``process`` hands
# it to the layout of each file it rewrites.


class HelperGone(ConnectionError):
    """The helper cannot answer: black runs in this process instead."""


class BlackHelper:
    def __init__(self, pid: int, requests, replies) -> None:
        self.pid = pid
        self.requests = requests
        self.replies = replies
        self.gone = False

    @classmethod
    def start(cls) -> Optional["BlackHelper"]:
        """A helper, or None where one would not help or could not be forked
        safely: black already imported, one core, no fork, other threads."""
        import threading

        if "black" in sys.modules or not hasattr(os, "fork"):
            return None
        if (os.cpu_count() or 1) < 2 or threading.active_count() > 1:
            return None
        pipes: List[int] = []
        try:
            pipes += os.pipe()
            pipes += os.pipe()
            parent = os.getpid()
            pid = os.fork()
        except OSError:  # out of processes or descriptors: black runs here
            for fd in pipes:
                os.close(fd)
            return None
        request_read, request_write, reply_read, reply_write = pipes
        if pid == 0:
            os.close(request_write)
            os.close(reply_read)
            code = 0
            try:
                _serve(parent, request_read, reply_write)
            except BaseException:
                code = 1
            os._exit(code)  # never the parent's exit handlers or buffered output
        os.close(request_read)
        os.close(reply_write)
        return cls(pid, os.fdopen(request_write, "wb"), os.fdopen(reply_read, "rb"))

    def format_str(self, text: str, line_length: int, lines: List[Tuple[int, int]]):
        """``black.format_str(text, mode=black.Mode(line_length=...), lines=...)``.
        Raises ``ValueError`` where black refuses the text, ``HelperGone`` (a
        ``ConnectionError``) where the helper cannot answer."""
        if self.gone:
            raise HelperGone("the helper stopped answering")
        try:
            pickle.dump((text, line_length, lines), self.requests)
            self.requests.flush()
            formatted, refusal = pickle.load(self.replies)
        except (OSError, EOFError, pickle.PickleError) as error:
            self.gone = True
            raise HelperGone(str(error)) from None
        if refusal is not None:
            raise ValueError(refusal)
        return formatted

    def stop(self) -> None:
        """End the helper now: the run asks nothing more, and a helper still
        importing black must not make the run wait for it."""
        for stream in (self.requests, self.replies):
            with contextlib.suppress(OSError):
                stream.close()
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGTERM)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


@contextlib.contextmanager
def started() -> Iterator[Optional[BlackHelper]]:
    """A helper for the duration of a run, in ``running``."""
    global running
    helper = BlackHelper.start()
    running = helper
    try:
        yield helper
    finally:
        running = None
        if helper is not None:
            helper.stop()


def _serve(parent: int, request_fd: int, reply_fd: int) -> None:
    # The parent decides what Ctrl-C means; a parent that dies takes this along.
    bind_to_parent(parent)
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)  # nothing of the helper's reaches the user's output
    os.dup2(quiet, 2)
    import black

    requests = os.fdopen(request_fd, "rb")
    replies = os.fdopen(reply_fd, "wb")
    while True:
        try:
            text, line_length, lines = pickle.load(requests)
        except EOFError:
            return
        try:
            mode = black.Mode(line_length=line_length)
            reply = (black.format_str(text, mode=mode, lines=lines), None)
        except Exception as error:  # black refuses some valid code
            reply = (None, f"{type(error).__name__}: {error}")
        pickle.dump(reply, replies)
        replies.flush()
