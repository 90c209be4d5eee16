#!/usr/bin/env python
"""How torchport's cost grows with its input, shape by shape: each at N and 2N bytes.

Usage::

    python scripts/growth.py [--size 40000] [--shapes data_literal,comments,...]
                             [--mode write|diff] [--no-format]

Each shape is a file of about N bytes (then 2N) that holds a CUDA site and grows in
one way: a long data literal beside the site, many short assignments, many sites
(in a run, in functions, in one function, suppressed, in f-strings), comments, a
docstring. Each size is rewritten by ``process_source`` (what a worker runs for
one file) in a fresh process, after a warm-up: printed are its CPU time, the peak
of the memory Python allocated (``tracemalloc``, a second run) and that peak as a
multiple of the file's size at 2N, then the ratios at 2N over N. A ratio near 2
is linear; near 4, quadratic. The default N runs in about a minute; times under a
second are noisy, so ``--size 40000`` (a few minutes) gives steadier ratios.
Shapes that torchport refuses (over ``codemod/run/limits.py``'s bounds) say so.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict

ROOT = Path(__file__).resolve().parent.parent

SITE = "x = torch.zeros(1).cuda()\n"


def _repeat(head: str, line: Callable[[int], str], size: int, tail: str = "") -> str:
    """``head``, then ``line(0)``, ``line(1)``, ... until about ``size`` bytes."""
    out, total, index = [head], len(head) + len(tail), 0
    while total < size:
        text = line(index)
        out.append(text)
        total += len(text)
        index += 1
    out.append(tail)
    return "".join(out)


def data_literal(size: int) -> str:
    """A site, then ``DATA = [1, 1, ...]`` on one line."""
    head = "import torch\n\n" + SITE + "DATA = ["
    return head + "1, " * max((size - len(head)) // 3, 1) + "]\n"


def data_lines(size: int) -> str:
    """A site, then a literal of one item a line."""
    return _repeat(
        "import torch\n\n" + SITE + "DATA = [\n", lambda i: "    1,\n", size, "]\n"
    )


def assignments(size: int) -> str:
    """``vN = N`` lines, then a site (each line is judged for what follows it)."""
    return _repeat("import torch\n\n", lambda i: f"v{i} = {i}\n", size, SITE)


def sites(size: int) -> str:
    """A run of statements that each hold a site (one chunk)."""
    return _repeat(
        "import torch\n\n", lambda i: f"x{i} = torch.zeros(1).cuda()\n", size
    )


def site_functions(size: int) -> str:
    """Functions that each hold a site."""
    return _repeat(
        "import torch\n\n",
        lambda i: f"\n\ndef f{i}(x):\n    return x.cuda()\n",
        size,
    )


def guards(size: int) -> str:
    """Guards on availability, each around a CUDA call."""
    return _repeat(
        "import torch\n\n",
        lambda i: "if torch.cuda.is_available():\n    torch.cuda.synchronize()\n",
        size,
    )


def device_strings(size: int) -> str:
    """Device objects made at import (each an early read of the device, reported),
    after a function whose site is rewritten."""
    head = "import torch\n\n\ndef move(x):\n    return x.cuda()\n\n\n"
    return _repeat(head, lambda i: f'd{i} = torch.device("cuda")\n', size)


def one_function(size: int) -> str:
    """One function whose body holds a site a line."""
    return _repeat(
        "import torch\n\n\ndef main(x):\n",
        lambda i: f"    y{i} = x.cuda() + {i}\n",
        size,
        "    return x\n",
    )


def suppressed(size: int) -> str:
    """Sites, every other one suppressed by a ``# noqa``."""
    return _repeat(
        "import torch\n\n",
        lambda i: f"x{i} = torch.zeros(1).cuda()"
        + ("  # noqa: TP201\n" if i % 2 else "\n"),
        size,
    )


def methods(size: int) -> str:
    """One class whose methods each hold a site."""
    return _repeat(
        "import torch\n\n\nclass Model:\n",
        lambda i: f"    def f{i}(self, x):\n        return x.cuda()\n\n",
        size,
    )


def amp_uses(size: int) -> str:
    """Uses of names imported from ``torch.cuda.amp``."""
    return _repeat(
        "import torch\nfrom torch.cuda.amp import GradScaler, autocast\n\n",
        lambda i: f"with autocast():\n    s{i} = GradScaler()\n",
        size,
    )


def format_strings(size: int) -> str:
    """Device strings in f-strings."""
    return _repeat(
        "import torch\n\n",
        lambda i: f'x{i} = torch.zeros(1).to(f"cuda:{{{i} % 2}}")\n',
        size,
    )


def comments(size: int) -> str:
    """A site, then comment lines that mention CUDA."""
    return _repeat("import torch\n\n" + SITE, lambda i: "# runs on cuda\n", size)


def docstring(size: int) -> str:
    """A module docstring, then a site."""
    return _repeat(
        '"""Docs.\n',
        lambda i: "about the calls\n",
        size,
        '"""\n' + "import torch\n\n" + SITE,
    )


SHAPES: Dict[str, Callable[[int], str]] = {
    f.__name__: f
    for f in (
        data_literal,
        data_lines,
        assignments,
        sites,
        site_functions,
        guards,
        device_strings,
        one_function,
        suppressed,
        methods,
        amp_uses,
        format_strings,
        comments,
        docstring,
    )
}

# Runs in a fresh process, for each shape: a warm-up (black, caches), the timed runs
# at N and 2N, then both again under tracemalloc; one JSON line a shape.
PROBE = """
import json, sys, time, tracemalloc
sys.path.insert(0, sys.argv[1])
sys.setrecursionlimit(10000)
from codemod.model.options import Options
from codemod.run.job import DIFF, WRITE, Job
from codemod.run.process import process_source
sys.path.insert(0, sys.argv[1] + "/scripts")
from growth import SHAPES
size = int(sys.argv[3])
job = Job(DIFF if sys.argv[4] == "diff" else WRITE, Options(target_torch=(2, 10)),
          format=sys.argv[5] == "format")
for name in sys.argv[2].split(","):
    shape = SHAPES[name]
    process_source("warm.py", shape(size // 4).encode(), job)
    found = []
    for n in (size, 2 * size):
        data = shape(n).encode()
        started = time.process_time()
        result = process_source("shape.py", data, job)
        found.append({"bytes": len(data), "seconds": time.process_time() - started,
                      "error": result.error, "changed": result.changed})
    for n, run in zip((size, 2 * size), found):
        tracemalloc.start()
        process_source("shape.py", shape(n).encode(), job)
        run["peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print(json.dumps([name, found]), flush=True)
"""


def measure(names, size: int, mode: str, format_: bool):
    """(shape, [run at N, run at 2N]) for each shape, as the probe prints them."""
    proc = subprocess.Popen(
        [sys.executable, "-c", PROBE, str(ROOT), ",".join(names), str(size), mode]
        + ["format" if format_ else "no"],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    for line in proc.stdout:
        yield json.loads(line)
    if proc.wait() != 0:
        raise SystemExit(f"the probe failed (exit {proc.returncode})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4_000, help="N, in bytes")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--mode", choices=("write", "diff"), default="write")
    parser.add_argument("--no-format", action="store_true")
    args = parser.parse_args()
    names = args.shapes.split(",")
    print(
        f"{'shape':<15} {'N bytes':>9} {'t(N) s':>7} {'t(2N) s':>7} {'ratio':>6}"
        f" {'mem(N) MB':>9} {'mem(2N) MB':>10} {'ratio':>6} {'mem/size':>8}  result"
    )
    for name, (small, large) in measure(
        names, args.size, args.mode, not args.no_format
    ):
        result = "rewritten" if large["changed"] else "unchanged"
        if large["error"]:
            result = large["error"].split(": ", 1)[-1][:60]
        print(
            f"{name:<15} {args.size:>9} {small['seconds']:>7.2f}"
            f" {large['seconds']:>7.2f}"
            f" {large['seconds'] / max(small['seconds'], 1e-6):>6.2f}"
            f" {small['peak'] / 1e6:>9.1f} {large['peak'] / 1e6:>10.1f}"
            f" {large['peak'] / max(small['peak'], 1):>6.2f}"
            f" {large['peak'] / large['bytes']:>8.1f}  {result}"
        )


if __name__ == "__main__":
    main()
