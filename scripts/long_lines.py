#!/usr/bin/env python
"""Time and peak memory of torchport on one long line holding a CUDA site.

Usage::

    python scripts/long_lines.py [--sizes 20000,40000,80000] [--over 1200000]
                                 [--torchport CMD]

For each size, a file ``import torch`` / ``x = torch.tensor([0, 1, 2, ...]).cuda()``
whose second statement is one line of about that many bytes (generated code, a
notebook exported to ``.py``) is rewritten in place by the command line, with and
without ``--no-format``, each in a fresh wrapper process. Printed per run: wall
time, CPU time (user + system, of torchport and its workers: the machine may be
shared) and peak RSS (``getrusage(RUSAGE_CHILDREN)``), and CPU time per megabyte,
which stays flat when the cost is linear in the size; then the ratio of the
largest size's CPU time per megabyte to the smallest's (1.0 is linear).

``--over`` is a size above torchport's bound on one statement (100,000 characters,
``codemod/run/limits.py``): that file is refused on one line, at once ("refused").
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs the command, then reports its exit code, wall time, CPU time and peak RSS.
PROBE = """
import json, resource, subprocess, sys, time
started = time.monotonic()
proc = subprocess.run(sys.argv[1:], capture_output=True)
wall = time.monotonic() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": proc.returncode, "wall": wall,
                  "cpu": usage.ru_utime + usage.ru_stime,
                  "rss_mib": usage.ru_maxrss / 1024,
                  "stderr": proc.stderr.decode(errors="replace")[-500:]}))
"""


def long_line_file(path: Path, size: int) -> None:
    items, total, i = [], 0, 0
    while total < size:
        item = str(i)
        items.append(item)
        total += len(item) + 2
        i += 1
    path.write_text(
        f"import torch\n\nx = torch.tensor([{', '.join(items)}]).cuda()\ny = 1\n"
    )


def measure(command, path: Path, flags):
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *command, *flags, str(path)],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    return json.loads(proc.stdout)


def torchport_command(given) -> list:
    """The command that runs torchport: ``--torchport``'s, else this checkout's."""
    return shlex.split(given) if given else [sys.executable, "-m", "codemod"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,40000,80000")
    parser.add_argument("--over", default="1200000", help="a size over the bound")
    parser.add_argument("--torchport", help="command (default: python -m codemod)")
    args = parser.parse_args()
    command = torchport_command(args.torchport)
    print(
        f"{'line bytes':>10}  {'flags':<12} {'wall s':>7} {'cpu s':>7}"
        f" {'cpu s/MB':>8} {'peak MiB':>8}  result"
    )
    sizes = [int(s) for s in args.sizes.split(",")]
    per_mb = {}
    with tempfile.TemporaryDirectory() as folder:
        for flags in ([], ["--no-format"]):
            for size in sizes + ([int(args.over)] if args.over else []):
                path = Path(folder) / f"long_{size}.py"
                long_line_file(path, size)
                got = measure(command, path, flags)
                rewritten = ".to(_DEVICE())" in path.read_text()
                result = "rewritten" if rewritten else f"exit {got['code']}"
                if "torchport rewrites statements of up to" in got["stderr"]:
                    result = "refused (over the bound)"
                elif got["code"] not in (0, 1):
                    result += ": " + got["stderr"].strip().splitlines()[-1]
                if size in sizes:
                    per_mb[(size, tuple(flags))] = got["cpu"] / (size / 1e6)
                print(
                    f"{size:>10}  {' '.join(flags) or '(format)':<12}"
                    f" {got['wall']:>7.1f} {got['cpu']:>7.1f}"
                    f" {got['cpu'] / (size / 1e6):>8.1f} {got['rss_mib']:>8.0f}  {result}"
                )
    for flags in ([], ["--no-format"]):
        ratio = per_mb[(sizes[-1], tuple(flags))] / per_mb[(sizes[0], tuple(flags))]
        print(
            f"{'':>10}  {' '.join(flags) or '(format)':<12} cpu per MB,"
            f" {sizes[-1]} bytes / {sizes[0]} bytes: {ratio:.2f}"
        )


if __name__ == "__main__":
    main()
