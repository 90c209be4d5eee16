#!/usr/bin/env python
"""Time and peak memory of torchport on notebooks of growing size.

Usage::

    python scripts/notebook_sizes.py [--cells 300,1000,3000] [--torchport CMD]

For each size, a notebook of that many code cells (``import torch`` in the first,
a CUDA site, a plain line and an output in every one, and a markdown cell every
tenth) is rewritten in place by the command line, in a fresh wrapper process, with
and without ``--no-format``. Printed per run: wall time, CPU time (user + system,
of torchport and its workers) and peak RSS, and CPU time per thousand cells, which
stays flat when the cost is linear in the number of cells; then the ratio of the
largest size's CPU time per cell to the smallest's (1.0 is linear, 10 quadratic
over 300 to 3,000 cells).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from long_lines import measure, torchport_command  # noqa: E402  (the same probe)


def notebook(path: Path, cells: int) -> None:
    items = []
    for i in range(cells):
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
                    {"name": "stdout", "output_type": "stream", "text": [f"{i}\n"]}
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", default="300,1000,3000")
    parser.add_argument("--torchport", help="command (default: python -m codemod)")
    args = parser.parse_args()
    command = torchport_command(args.torchport)
    sizes = [int(s) for s in args.cells.split(",")]
    print(
        f"{'cells':>6} {'KiB':>6}  {'flags':<12} {'wall s':>7} {'cpu s':>7}"
        f" {'cpu s/1k cells':>14} {'peak MiB':>8}  result"
    )
    per_cell = {}
    with tempfile.TemporaryDirectory() as folder:
        for flags in ([], ["--no-format"]):
            for size in sizes:
                path = Path(folder) / f"cells_{size}.ipynb"
                notebook(path, size)
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
            print(
                f"{'':>6} {'':>6}  {' '.join(flags) or '(format)':<12} cpu per cell,"
                f" {sizes[-1]} cells / {sizes[0]} cells: {large / small:.2f}"
            )


if __name__ == "__main__":
    main()
