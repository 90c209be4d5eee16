#!/usr/bin/env python
"""Run every fixture whose target torch is older than torch.accelerator on an old torch.

Usage::

    python scripts/old_torch_fixtures.py PYTHON [--below 2.6]

``PYTHON`` is the interpreter of a virtual environment with an old torch (2.4 or 2.5).
For each fixture whose ``# fixture-options: --target-torch X`` is below ``--below``:

1. the ``after`` file must not name an API newer than its target (``NEWER`` below: a
   static check, so it holds even for code the run does not reach);
2. the ``after`` file must run to completion on ``PYTHON``'s torch, on the CPU.

The rewrite itself (before -> after) is checked by the test suite with the current torch;
this script proves that what torchport emits for an old target runs on an old torch.
Exit status 1 if any fixture fails, 2 if ``PYTHON`` has no torch.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from codemod.model.rule import TorchVersion, format_version, parse_version  # noqa: E402
from tests.fixture_cases import (  # noqa: E402
    after_of,
    before_files,
    case_id,
    options_of,
    run_program,
)

# Portable APIs torchport emits, with the release that introduced each (see the
# reference on portable APIs, section 1), matched against each dotted name the code
# reads: docstrings and comments may mention them freely.
NEWER: List[Tuple[str, TorchVersion]] = [
    (r"(^|\.)accelerator(\.|$)", (2, 6)),
    (r"(^|\.)get_default_backend_for_device$", (2, 6)),
    (r"(^|\.)get_device_module$", (2, 4)),
    (r"^torch\.(Event|Stream)$", (2, 4)),
    (r"^torch\.amp\.custom_(fwd|bwd)$", (2, 4)),
    (r"^torch\.(amp\.)?GradScaler$", (2, 3)),
    (r"(^|\.)get_default_device$", (2, 3)),
]


def _guarded(tree: ast.AST) -> set:
    """The nodes that run only where ``hasattr(torch, "accelerator")`` holds: the
    body of an ``if`` (or the operand after an ``and``) that tests it, as the
    adaptive device binding does."""

    def tests_it(node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", None) == "hasattr"
            and len(node.args) == 2
            and getattr(node.args[1], "value", None) == "accelerator"
        )

    guarded = set()
    for node in ast.walk(tree):
        test = getattr(node, "test", None)
        if isinstance(node, (ast.If, ast.IfExp)) and tests_it(test):
            body = node.body if isinstance(node.body, list) else [node.body]
            guarded.update(n for part in body for n in ast.walk(part))
        if isinstance(node, (ast.If, ast.IfExp)) and isinstance(test, ast.BoolOp):
            if isinstance(test.op, ast.And) and tests_it(test.values[0]):
                body = node.body if isinstance(node.body, list) else [node.body]
                for part in [*body, *test.values[1:]]:
                    guarded.update(ast.walk(part))
    return guarded


def dotted_names(code: str) -> List[str]:
    """Every ``a.b.c`` chain (and bare name) the code reads, but where it runs only
    on a torch that has ``torch.accelerator``."""
    names = []
    tree = ast.parse(code)
    guarded = _guarded(tree)
    for node in ast.walk(tree):
        if node in guarded:
            continue
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            names.append(".".join([node.id, *reversed(parts)]))
    return names


def too_new(code: str, target: TorchVersion) -> List[str]:
    """The names ``code`` reads that need a newer torch than ``target``."""
    names = "\n".join(dotted_names(code))
    return [
        f"{pattern} needs torch >= {format_version(needs)}"
        for pattern, needs in NEWER
        if target < needs and re.search(pattern, names, re.MULTILINE)
    ]


def old_target_fixtures(below: TorchVersion) -> List[Path]:
    return [
        before
        for before in before_files()
        if options_of(before.read_text(encoding="utf-8")).target_torch < below
    ]


def torch_version(python: str) -> str:
    proc = subprocess.run(
        [python, "-c", "import torch; print(torch.__version__)"],
        capture_output=True,
        text=True,
    )
    if proc.returncode:
        raise SystemExit(f"{python}: cannot import torch\n{proc.stderr[-2000:]}")
    return proc.stdout.strip()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("python", help="interpreter of the old-torch environment")
    parser.add_argument("--below", default="2.6", help="targets older than this")
    args = parser.parse_args(argv)
    if os.sep in args.python:  # each program runs in a folder of its own
        args.python = os.path.abspath(args.python)
    below = parse_version(args.below)
    try:
        version = torch_version(args.python)
    except SystemExit as error:
        print(error, file=sys.stderr)
        return 2
    cases = old_target_fixtures(below)
    failed = 0
    for before in cases:
        after = after_of(before)
        code = after.read_text(encoding="utf-8")
        target = options_of(code).target_torch
        problems = too_new(code, target)
        with tempfile.TemporaryDirectory() as cwd:
            proc = run_program(args.python, after, Path(cwd))
        if proc.returncode:
            problems.append("exit %d: %s" % (proc.returncode, proc.stderr[-1500:]))
        status = "FAIL" if problems else "ok"
        print(f"{status:4} {case_id(before)} (target {format_version(target)})")
        for problem in problems:
            print(f"     {problem}")
        failed += bool(problems)
    print(
        f"{len(cases) - failed} of {len(cases)} fixtures with a target below"
        f" {format_version(below)} pass on torch {version}"
    )
    return 1 if failed or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
