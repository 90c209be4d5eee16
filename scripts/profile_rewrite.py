#!/usr/bin/env python
"""Time ``rewrite_source`` file by file in one process, and optionally profile it.

Usage::

    python scripts/profile_rewrite.py PATH [PATH ...] [--top 15] [--profile 25]
                                      [--no-format]

PATH is a file or a folder (its ``*.py`` files whose bytes say ``cuda``). Prints the
slowest files with their time, the total, and with ``--profile N`` the N top lines of
a cProfile of the whole run, sorted by cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from codemod.run.io import decode  # noqa: E402
from codemod.run.prefilter import needs_parsing  # noqa: E402
from codemod.rewrite.formatting import black_mode  # noqa: E402
from codemod.model.options import Options  # noqa: E402
from codemod.rewrite.pipeline import RewriteError, rewrite_source  # noqa: E402


def _files(paths):
    for path in map(Path, paths):
        if path.is_dir():
            for file in sorted(path.rglob("*.py")):
                if needs_parsing(file.read_bytes()):
                    yield file
        else:
            yield path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--top", type=int, default=15, help="slowest files shown")
    parser.add_argument("--profile", type=int, default=0, help="profile lines shown")
    parser.add_argument("--no-format", action="store_true", help="skip black")
    args = parser.parse_args()
    options = Options(target_torch=(2, 10))
    mode = None if args.no_format else black_mode(None)
    sources = [(file, decode(file.read_bytes())[0]) for file in _files(args.paths)]
    profile = cProfile.Profile() if args.profile else None
    times = []
    for file, source in sources:
        start = time.process_time()
        if profile:
            profile.enable()
        try:
            rewrite_source(source, options, format_mode=mode)
        except (SyntaxError, RewriteError) as error:
            print(f"{file}: {type(error).__name__}: {error}", file=sys.stderr)
        if profile:
            profile.disable()
        times.append((time.process_time() - start, file, len(source)))
    times.sort(reverse=True)
    for seconds, file, size in times[: args.top]:
        print(f"{seconds:8.3f} s  {size / 1024:7.1f} KiB  {file}")
    print(f"{sum(t for t, *_ in times):8.3f} s  total over {len(times)} files")
    if profile:
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(
            args.profile
        )
        print(out.getvalue())


if __name__ == "__main__":
    main()
