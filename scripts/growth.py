#!/usr/bin/env python
"""How torchport's cost grows with its input, shape by shape: each at N and 2N bytes.

Usage::

    python scripts/growth.py [--size 40000] [--shapes data_literal,comments,...]
                             [--mode write|diff] [--no-format]

Each shape is a file of about N bytes (then 2N) that holds a CUDA site and grows in
one way: a long data literal beside the site, many short assignments, many sites,
comments, a docstring. Each size is rewritten by ``process_source`` (what a worker
runs for one file) in a fresh process: printed are its CPU time, the peak of the
memory Python allocated (``tracemalloc``, a second run) and that peak as a multiple
of the file's size, then the ratios at 2N over N. A ratio near 2 is linear; near 4,
quadratic. Shapes that torchport refuses (over ``codemod/run/limits.py``'s bounds)
say so.
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
        comments,
        docstring,
    )
}

# Runs in a fresh process: one warm-up, the timed run, then a run under tracemalloc.
PROBE = """
import json, sys, time, tracemalloc
from pathlib import Path
sys.path.insert(0, sys.argv[1])
sys.setrecursionlimit(10000)
from codemod.model.options import Options
from codemod.run.job import DIFF, WRITE, Job
from codemod.run.process import process_source
path = Path(sys.argv[2])
data = path.read_bytes()
job = Job(DIFF if sys.argv[3] == "diff" else WRITE, Options(target_torch=(2, 10)),
          format=sys.argv[4] == "format")
process_source("warm.py", b"import torch\\nx = torch.ones(1).cuda()\\n", job)
started = time.process_time()
result = process_source(str(path), data, job, path)
seconds = time.process_time() - started
tracemalloc.start()
process_source(str(path), data, job, path)
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
print(json.dumps({"seconds": seconds, "peak": peak, "error": result.error,
                  "changed": result.changed}))
"""


def measure(source: str, folder: Path, mode: str, format_: bool) -> dict:
    path = folder / "shape.py"
    path.write_text(source)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            PROBE,
            str(ROOT),
            str(path),
            mode,
            "format" if format_ else "no",
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8_000, help="N, in bytes")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--mode", choices=("write", "diff"), default="write")
    parser.add_argument("--no-format", action="store_true")
    args = parser.parse_args()
    names = args.shapes.split(",")
    print(
        f"{'shape':<15} {'N bytes':>9} {'t(N) s':>7} {'t(2N) s':>7} {'ratio':>6}"
        f" {'mem(N) MB':>9} {'mem(2N) MB':>10} {'ratio':>6} {'mem/size':>8}  result"
    )
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            shape = SHAPES[name]
            small, large = (
                measure(shape(size), Path(folder), args.mode, not args.no_format)
                for size in (args.size, 2 * args.size)
            )
            size = len(shape(2 * args.size))
            result = "rewritten" if large["changed"] else "unchanged"
            if large["error"]:
                result = large["error"].split(": ", 1)[-1][:60]
            print(
                f"{name:<15} {args.size:>9} {small['seconds']:>7.2f}"
                f" {large['seconds']:>7.2f} {large['seconds'] / max(small['seconds'], 1e-6):>6.2f}"
                f" {small['peak'] / 1e6:>9.1f} {large['peak'] / 1e6:>10.1f}"
                f" {large['peak'] / max(small['peak'], 1):>6.2f}"
                f" {large['peak'] / size:>8.1f}  {result}"
            )


if __name__ == "__main__":
    main()
