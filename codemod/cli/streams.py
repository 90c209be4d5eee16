"""Where a run's output goes, and what stops a run: standard output (or
``--output-file``), whether it is coloured, and Ctrl-C or SIGTERM.

Writing can fail (a closed standard output, a full disk, a reader that went away):
that is one line on standard error and exit 2, never a traceback. File names that
are not valid UTF-8 are written with their bytes escaped (``\\xff``), so no output
encoding can refuse them; a diff keeps the name's bytes, for ``git apply``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import sys
from pathlib import Path
from typing import Optional

import click

from codemod.cli.summary import EXIT_INTERRUPTED
from codemod.model.text import printable
from codemod.output.findings import visible

COLOR_CHOICES = ("auto", "always", "never")


class OutputError(Exception):
    """The output could not be written; the message says where and why."""


def wants_color(choice: str, stream=None) -> bool:
    """Whether to colour ``stream`` (standard output): ``--color always`` and
    ``never`` decide; ``auto`` follows ``FORCE_COLOR`` (any value but empty),
    then ``NO_COLOR``, then ``CLICOLOR_FORCE`` (not 0), then ``CLICOLOR=0``, then
    whether the stream is a terminal (not ``TERM=dumb``). As in Ruff, ``CI`` alone
    changes nothing: a CI log is no terminal, a terminal in CI still is one."""
    if choice != "auto":
        return choice == "always"
    environ = os.environ
    if environ.get("FORCE_COLOR"):
        return True
    if environ.get("NO_COLOR"):
        return False
    if environ.get("CLICOLOR_FORCE", "0") not in ("", "0"):
        return True
    if environ.get("CLICOLOR") == "0":
        return False
    stream = sys.stdout if stream is None else stream
    try:
        tty = stream is not None and stream.isatty()
    except (OSError, ValueError):
        tty = False
    return tty and environ.get("TERM") != "dumb"


class Output:
    """Standard output, or the ``--output-file``: text and bytes, checked.

    A reader that goes away (``| head``) ends the output quietly; any other
    failure raises ``OutputError``.
    """

    def __init__(
        self, path: Optional[Path] = None, color: bool = False, err: bool = False
    ) -> None:
        self.path = path
        self.color = color and path is None
        self.err = err  # standard error instead of standard output
        self.broken_pipe = False
        self._file = None

    @property
    def where(self) -> str:
        if self.path is not None:
            return str(self.path)
        return "standard error" if self.err else "standard output"

    def check_open(self) -> None:
        """OutputError now, before anything is done, when standard output is
        closed (``>&-``): a run must not rewrite what it cannot report."""
        if self.path is not None or self.err:
            return
        try:
            os.fstat(1)
        except OSError:
            raise OutputError("standard output is closed") from None
        if sys.stdout is None:
            raise OutputError("standard output is closed")

    def write(self, text: str) -> None:
        if text:
            self.write_bytes(visible(text).encode("utf-8", "replace"))

    def write_bytes(self, data: bytes) -> None:
        if not data or self.broken_pipe:
            return
        try:
            stream = self._stream()
            stream.write(data)
            stream.flush()
        except BrokenPipeError:
            self._went_away()
        except (OSError, ValueError) as error:
            raise OutputError(
                f"cannot write to {self.where}: {_reason(error)}"
            ) from None

    def _stream(self):
        if self.path is None:
            stream = sys.stderr if self.err else sys.stdout
            if stream is None:
                raise OSError(errno.EBADF, f"{self.where} is closed")
            return stream.buffer
        if self._file is None:
            self._file = open(self.path, "wb")
        return self._file

    def _went_away(self) -> None:
        """The reader closed the pipe: stop writing, and keep Python from failing
        on the flush at exit."""
        self.broken_pipe = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, AttributeError, ValueError):
            pass

    def close(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError as error:
                raise OutputError(
                    f"cannot write to {self.where}: {_reason(error)}"
                ) from None
            finally:
                self._file = None

    def open_file(self) -> None:
        """Create the output file now, so that a path that cannot be written is
        said before the run, not after it."""
        if self.path is not None and self._file is None:
            try:
                self._file = open(self.path, "wb")
            except OSError as error:
                raise OutputError(
                    f"cannot write to {self.where}: {_reason(error)}"
                ) from None


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


# A word longer than this (a configuration key, a value, a name of a megabyte)
# is cut in the middle: a message stays a line a person reads.
LONGEST_WORD = 200


def one_line_shown(message: str) -> str:
    """``message`` as one line a terminal shows as it is: every control character
    escaped (``\x1b``, ``\n``), each very long word cut in the middle."""
    shown = printable(message)
    if len(shown) <= LONGEST_WORD:
        return shown

    def cut(match: "re.Match[str]") -> str:
        word = match.group()
        skipped = len(word) - LONGEST_WORD
        half = LONGEST_WORD // 2
        return f"{word[:half]}...[{skipped} characters]...{word[-half:]}"

    return re.sub(rf"\S{{{LONGEST_WORD + 1},}}", cut, shown)


def fail(message: str, code: int = 2) -> None:
    """``torchport: MESSAGE`` on standard error, and exit ``code``."""
    click.echo(f"torchport: {one_line_shown(message)}", err=True)
    sys.exit(code)


@contextlib.contextmanager
def interruptible():
    """Ctrl-C and SIGTERM: stop the workers, say so in one line, exit 130 / 143.

    Every file is then untouched or completely rewritten (``io.write_atomic``).
    """

    def terminated(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    except KeyboardInterrupt:
        click.echo(
            "torchport: interrupted; files not yet rewritten are untouched", err=True
        )
        sys.exit(EXIT_INTERRUPTED)
    except SystemExit as stop:
        if stop.code == 128 + signal.SIGTERM:
            click.echo(
                "torchport: terminated; files not yet rewritten are untouched", err=True
            )
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
