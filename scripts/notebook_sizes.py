#!/usr/bin/env python
"""Time and peak memory of torchport on notebooks of growing size.

Usage::

    python scripts/notebook_sizes.py [--cells 300,1000,3000] [--torchport CMD]
                                     [--output-kib N] [--also FLAGS]...
                                     [--max-ratio R]

For each size, a notebook of that many code cells (``import torch`` in the first,
a CUDA site, a plain line and an output in every one, and a markdown cell every
tenth; ``--output-kib`` makes each output about N KiB of text, as in notebooks
saved with their outputs: 4 makes 3,000 cells a 14 MB file) is rewritten in place
by the command line, in a fresh wrapper process, with and without ``--no-format``
(and run with the arguments of each ``--also``, such as ``"check --diff"``).
Printed per run: wall time, CPU time (user + system, of torchport and its
workers) and peak RSS, and CPU time per thousand cells, which stays flat when the
cost is linear in the number of cells; then the ratio of the largest size's CPU
time per cell to the smallest's (1.0 is linear, 10 quadratic over 300 to 3,000
cells).

Then, in this process, the splice of a new source into every code cell of each
notebook (``notebook_json.with_sources``, best of five), the part of a run that
used to scan and rebuild the whole file once per changed cell, and its ratio.
With ``--max-ratio``, the script exits 1 when any ratio is above R: the linearity
check (about 1 is linear; a scan of the file per cell, as the splice once did,
measured 3.9 from 750 to 3,000 cells).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from long_lines import ROOT, measure, torchport_command  # noqa: E402  (same probe)

sys.path.insert(0, str(ROOT))
from codemod.run.notebook_json import source_spans, with_sources  # noqa: E402


def notebook(path: Path, cells: int, output_kib: int = 0) -> None:
    items = []
    for i in range(cells):
        printed = [f"{i}\n"] + [f"{i} {'.' * 77}\n"] * (output_kib * 1024 // 80)
        source = [f"x{i} = torch.ones({i % 7 + 1}).cuda()\n", f"y{i} = x{i} + {i}"]
        if i == 0:
            source.insert(0, "import torch\n")
        items.append(
            {
                "cell_type": "code",
                "execution_count": i + 1,
                "id": f"c{i:05d}",
                "metadata": {},
                "outputs": [
                    {"name": "stdout", "output_type": "stream", "text": printed}
                ],
                "source": source,
            }
        )
        if i % 10 == 9:
            items.append(
                {
                    "cell_type": "markdown",
                    "id": f"m{i:05d}",
                    "metadata": {},
                    "source": [f"## Part {i // 10}"],
                }
            )
    data = {
        "cells": items,
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(data, indent=1) + "\n")


def splice_seconds(path: Path) -> float:
    """CPU seconds of the splice of a new source into every code cell of ``path``."""
    text = path.read_text(encoding="utf-8")
    spans = list(source_spans(text))
    cells = json.loads(text)["cells"]
    sources = {
        index: "x = torch.ones(1).to(DEVICE())\ny = 'caf\u00e9'\n"
        for index, cell in enumerate(cells)
        if cell["cell_type"] == "code"
    }
    best = float("inf")
    for _ in range(5):
        started = time.process_time()
        with_sources(text, spans, sources)
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", default="300,1000,3000")
    parser.add_argument("--torchport", help="command (default: python -m codemod)")
    parser.add_argument(
        "--output-kib", type=int, default=0, help="KiB of output text per cell"
    )
    parser.add_argument(
        "--also",
        action="append",
        default=[],
        help="more runs, with these arguments (repeatable)",
    )
    parser.add_argument(
        "--max-ratio", type=float, help="exit 1 when a ratio is above this"
    )
    args = parser.parse_args()
    command = torchport_command(args.torchport)
    sizes = [int(s) for s in args.cells.split(",")]
    print(
        f"{'cells':>6} {'KiB':>6}  {'flags':<12} {'wall s':>7} {'cpu s':>7}"
        f" {'cpu s/1k cells':>14} {'peak MiB':>8}  result"
    )
    per_cell = {}
    ratios = []
    with tempfile.TemporaryDirectory() as folder:
        for flags in [[], ["--no-format"], *(shlex.split(a) for a in args.also)]:
            for size in sizes:
                path = Path(folder) / f"cells_{size}.ipynb"
                notebook(path, size, args.output_kib)
                kib = path.stat().st_size / 1024
                got = measure(command, path, flags)
                text = path.read_text()
                rewritten = text.count(".to(DEVICE)") == size
                result = "rewritten" if rewritten else f"exit {got['code']}"
                if not rewritten and got["stderr"].strip():
                    result += ": " + got["stderr"].strip().splitlines()[-1]
                per_cell[(size, tuple(flags))] = got["cpu"] / size
                print(
                    f"{size:>6} {kib:>6.0f}  {' '.join(flags) or '(format)':<12}"
                    f" {got['wall']:>7.1f} {got['cpu']:>7.1f}"
                    f" {1000 * got['cpu'] / size:>14.2f} {got['rss_mib']:>8.0f}"
                    f"  {result}"
                )
            small, large = (
                per_cell[(sizes[0], tuple(flags))],
                per_cell[(sizes[-1], tuple(flags))],
            )
            ratios.append(large / small)
            print(
                f"{'':>6} {'':>6}  {' '.join(flags) or '(format)':<12} cpu per cell,"
                f" {sizes[-1]} cells / {sizes[0]} cells: {large / small:.2f}"
            )
        splice = {}
        for size in sizes:
            path = Path(folder) / f"cells_{size}.ipynb"
            notebook(path, size, args.output_kib)
            splice[size] = splice_seconds(path) / size
            print(
                f"splice {size:>6} cells, in process: {1000 * size * splice[size]:.1f}"
                f" ms, {1e6 * splice[size]:.1f} ms per 1k cells"
            )
    ratios.append(splice[sizes[-1]] / max(splice[sizes[0]], 1e-9))
    print(
        f"splice time per cell, {sizes[-1]} cells / {sizes[0]} cells: {ratios[-1]:.2f}"
    )
    if args.max_ratio is not None and max(ratios) > args.max_ratio:
        print(f"not linear: a ratio is above {args.max_ratio}")
        sys.exit(1)


if __name__ == "__main__":
    main()
