#!/usr/bin/env python
"""Run every fixture on another torch release and compare it with this one's.

Usage::

    python scripts/release_fixtures.py PYTHON [--reference PYTHON] [--jobs N] [-k TEXT]

``PYTHON`` is the interpreter of a virtual environment with the other torch (the
newest release, say, or PyPI's CUDA build on a machine without a GPU). For each
fixture, on the CPU as CI runs them:

1. its ``after`` file must print on ``PYTHON`` what it prints on ``--reference``
   (default: this interpreter), exit status included;
2. where its ``before`` file runs to completion on ``PYTHON``, the ``after`` file
   prints the same there: the port computes what the original computed on that
   build (a CUDA build without a GPU is such a host).

Exit status 1 if any fixture differs, 2 if ``PYTHON`` has no torch.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.old_torch_fixtures import torch_version  # noqa: E402
from tests.fixture_cases import after_of, before_files, case_id  # noqa: E402
from tests.fixture_cases import run_program  # noqa: E402


def _run(python: str, path: Path) -> Tuple[int, str]:
    with tempfile.TemporaryDirectory() as cwd:
        proc = run_program(python, path, Path(cwd))
    return proc.returncode, proc.stdout


def compare(before: Path, python: str, reference: str) -> List[str]:
    """What differs for one fixture: empty when nothing does."""
    after = after_of(before)
    problems = []
    new, old = _run(python, after), _run(reference, after)
    if new != old:
        problems.append(
            f"after: exit {new[0]} here, {old[0]} on the reference;"
            f" output {'equal' if new[1] == old[1] else 'differs'}"
        )
    original = _run(python, before)
    if original[0] == 0 and original != new:
        problems.append("the before file runs here and prints something else")
    return problems


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("python", help="interpreter of the other torch")
    parser.add_argument("--reference", default=sys.executable)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("-k", default="", help="only fixtures whose id holds this")
    args = parser.parse_args(argv)
    try:
        versions = [torch_version(p) for p in (args.python, args.reference)]
    except SystemExit as error:
        print(error, file=sys.stderr)
        return 2
    cases = [b for b in before_files() if args.k in case_id(b)]
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(
            pool.map(lambda b: compare(b, args.python, args.reference), cases)
        )
    failed = 0
    for before, problems in zip(cases, results):
        if problems:
            failed += 1
            print(f"FAIL {case_id(before)}")
            for problem in problems:
                print(f"     {problem}")
    print(
        f"{len(cases) - failed} of {len(cases)} fixtures print the same on torch"
        f" {versions[0]} as on torch {versions[1]}"
    )
    return 1 if failed or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
