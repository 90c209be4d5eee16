"""python -m codemod.simulate [--devices N] [--build-only] [-v] -- COMMAND...

Runs COMMAND with the tpsim simulator as the accelerator of every Python it
starts. Exit status: the command's, 2 for bad usage, 3 when the simulator
cannot be built or loaded.
"""

from __future__ import annotations

import argparse
import sys

from ._build import SimulatorError, build
from ._child import run
from ._load import MAX_DEVICES


def main(
    argv: list[str] | None = None, prog: str = "python -m codemod.simulate"
) -> int:
    """The command line; ``prog`` names it in usage (e.g. "torchport simulate")."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run a command on torchport's simulated accelerator (tpsim).",
    )
    parser.add_argument(
        "--devices",
        type=int,
        default=2,
        metavar="N",
        help=f"number of simulated devices, 0 to {MAX_DEVICES} (default 2)",
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
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not args.build_only and not command:
        parser.error("give a command after --, or --build-only")
    try:
        if args.build_only:
            print(build(verbose=args.verbose))
            return 0
        build(verbose=args.verbose)
        return run(command, devices=args.devices)
    except SimulatorError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 3
    except FileNotFoundError as error:
        print(
            f"torchport simulate: {error.strerror}: {error.filename}", file=sys.stderr
        )
        return 127
