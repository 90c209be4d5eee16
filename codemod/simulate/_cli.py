"""python -m codemod.simulate [--devices N] [--build-only] [-v] -- COMMAND...

Runs COMMAND with the tpsim simulator as the accelerator of every Python it
starts. Exit status: the command's (128 + N when a signal N ended it), 2 for bad
usage, 3 when the simulator cannot be built or loaded (its cache folder
included), 126 when COMMAND is no program that can be run, 127 when it is not
found, 130 when interrupted while the simulator is built.

SIGTERM and SIGHUP are passed on to COMMAND, then its end is awaited: a killed
``torchport simulate`` leaves no program running. Ctrl-C reaches COMMAND from
the terminal itself (it is in the same process group), so this process only
waits for it to end.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys

from ._build import SimulatorError, build, cache_root
from ._child import environment
from ._load import MAX_DEVICES

EXIT_USAGE, EXIT_SIMULATOR, EXIT_NOT_RUNNABLE, EXIT_NOT_FOUND = 2, 3, 126, 127
EXIT_INTERRUPTED = 130
FORWARDED = (signal.SIGTERM, signal.SIGHUP)


def _devices(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= count <= MAX_DEVICES:
        raise argparse.ArgumentTypeError(
            f"the simulator offers 0 to {MAX_DEVICES} devices, not {count}"
        )
    return count


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run a command on torchport's simulated accelerator (tpsim).",
    )
    parser.add_argument(
        "--devices",
        type=_devices,
        default=2,
        metavar="N",
        help=f"number of simulated devices, 0 to {MAX_DEVICES} (default 2)",
    )
    parser.add_argument(
        "--autocast-dtype",
        choices=["float16", "bfloat16"],
        default=None,
        help="the device's default autocast dtype: float16 (CUDA's, the "
        "default) or bfloat16 (TorchTPU's); $TORCHPORT_SIM_AUTOCAST_DTYPE",
    )
    parser.add_argument(
        "--build-only",
        action="store_true",
        help="only compile the simulator (or find it cached) and print its path",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="show the compiler's output"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND...")
    return parser


def main(
    argv: list[str] | None = None, prog: str = "python -m codemod.simulate"
) -> int:
    """The command line; ``prog`` names it in usage (e.g. "torchport simulate")."""
    parser = _parser(prog)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not args.build_only and not command:
        parser.error("give a command after --, or --build-only")
    if not args.build_only:  # said now, not after minutes of compiling
        problem = _not_runnable(command[0])
        if problem is not None:
            return _say(prog, *problem)
    try:
        library = build(verbose=args.verbose)
        env = (
            None
            if args.build_only
            else environment(args.devices, autocast_dtype=args.autocast_dtype)
        )
    except SimulatorError as error:
        return _say(prog, str(error), EXIT_SIMULATOR)
    except OSError as error:  # the cache folder: a file, unwritable, ...
        return _say(prog, _cache_problem(error), EXIT_SIMULATOR)
    except KeyboardInterrupt:
        return _say(prog, "interrupted", EXIT_INTERRUPTED)
    if args.build_only:
        print(library)
        return 0
    return _run(prog, command, env)


def _run(prog: str, command: list[str], env: dict) -> int:
    """Run ``command`` to its end, passing SIGTERM and SIGHUP on to it."""
    try:
        child = subprocess.Popen(command, env=env)
    except FileNotFoundError:
        return _say(prog, f"{_shown(command[0])}: command not found", EXIT_NOT_FOUND)
    except OSError as error:  # a folder, a file that is not executable, ...
        reason = error.strerror or str(error)
        return _say(
            prog,
            f"{_shown(command[0])}: cannot run it ({reason}): give a program, such"
            " as `python script.py`",
            EXIT_NOT_RUNNABLE,
        )

    def forward(signum, frame) -> None:
        try:
            child.send_signal(signum)
        except ProcessLookupError:  # it has just ended
            pass

    previous = {number: signal.signal(number, forward) for number in FORWARDED}
    previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        code = child.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return 128 - code if code < 0 else code


def _not_runnable(program: str):
    """(message, exit code) when ``program`` cannot be run, else None."""
    if os.sep not in program:
        if shutil.which(program) is None:
            return f"{_shown(program)}: command not found", EXIT_NOT_FOUND
        return None
    if not os.path.lexists(program):
        return f"{_shown(program)}: no such file", EXIT_NOT_FOUND
    if os.path.isdir(program) or not os.access(program, os.X_OK):
        what = "a folder" if os.path.isdir(program) else "not executable"
        return (
            f"{_shown(program)}: cannot run it ({what}): give a program, such as"
            " `python script.py`",
            EXIT_NOT_RUNNABLE,
        )
    return None


def _cache_problem(error: OSError) -> str:
    root = cache_root()
    where = "TORCHPORT_CACHE_DIR" if os.environ.get("TORCHPORT_CACHE_DIR") else ""
    named = f" (${where})" if where else ""
    reason = error.strerror or str(error)
    path = f": {_shown(str(error.filename))}" if error.filename else ""
    return (
        f"cannot use the cache folder {_shown(str(root))}{named}: {reason}{path};"
        " set TORCHPORT_CACHE_DIR to a folder you can write"
    )


# Controls (C0, C1, DEL), bidirectional controls and the bytes of a name that is
# not UTF-8 (lone surrogates): shown escaped, never sent to the terminal as they are.
_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
LONGEST_SHOWN = 200


def _escape(match: "re.Match[str]") -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte of a name: that byte
        code -= 0xDC00
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _shown(text: str) -> str:
    """``text`` with its control characters escaped, cut when very long."""
    shown = _UNPRINTABLE.sub(_escape, text)
    if len(shown) > LONGEST_SHOWN:
        shown = shown[:LONGEST_SHOWN] + "..."
    return shown


def _say(prog: str, message: str, code: int) -> int:
    print(f"{prog}: {message}", file=sys.stderr)
    return code
