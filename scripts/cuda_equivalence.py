#!/usr/bin/env python
"""Check on a CUDA machine that every fixture's ``before`` and ``after`` print the same thing.

Usage (on any machine whose PyTorch sees a CUDA GPU)::

    python scripts/cuda_equivalence.py [--fixtures DIR] [-k SUBSTRING] [--python EXE]
                                       [--timeout 120] [--verbose] [--allow-cpu]

For every ``DIR/**/<case>.before.py`` with a sibling ``<case>.after.py`` (``DIR`` defaults to
the repository's ``fixtures/``: every pass fixture, every whole program in
``fixtures/programs/`` and the style goldens), both programs are run with the chosen
interpreter in a fresh temporary working directory, with ``CUBLAS_WORKSPACE_CONFIG=:4096:8``
and ``PYTHONHASHSEED=0`` and a timeout per program.  Their standard output is compared byte
for byte.  A pair is *same* when both exit 0 and print the same bytes, *differ* when both
exit 0 and the outputs differ, *failed* when either exits non-zero or times out.  The script
prints a table (case, before rc, after rc, same output) and ends with one
machine-readable line::

    cuda-equivalence: 130 pairs, 128 same, 1 differ, 1 failed; cuda available: True

It exits 0 when every pair is the same, 1 otherwise.

It refuses to run (exit 2) when ``torch.cuda.is_available()`` is False in the chosen
interpreter, because on a CPU-only host both programs take the CPU path and agreeing proves
little; ``--allow-cpu`` runs anyway (useful to try the script itself).

The script needs only the standard library and the interpreter's ``torch``; it does not import
torchport.  To carry the fixtures to an offline machine see ``scripts/bundle_wheels.sh``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROBE = (
    "import torch; ok = torch.cuda.is_available(); "
    "print(ok, torch.__version__, torch.cuda.get_device_name(0) if ok else '-', sep='|')"
)


def find_cases(root: Path, pattern: str | None) -> list[tuple[str, Path, Path]]:
    cases = []
    for before in sorted(root.rglob("*.before.py")):
        after = before.with_name(before.name[: -len(".before.py")] + ".after.py")
        if not after.exists():
            continue
        name = str(before.relative_to(root))[: -len(".before.py")]
        if pattern and pattern not in name:
            continue
        cases.append((name, before, after))
    return cases


def run(
    python: str, script: Path, timeout: float, env: dict
) -> tuple[str, bytes, bytes]:
    with tempfile.TemporaryDirectory(prefix="cuda-eq-") as cwd:
        try:
            p = subprocess.run(
                [python, str(script)],
                capture_output=True,
                timeout=timeout,
                env=env,
                cwd=cwd,
            )
            return str(p.returncode), p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            return "timeout", e.stdout or b"", e.stderr or b""


def classify(rc_before: str, rc_after: str, out_before: bytes, out_after: bytes) -> str:
    """``same``, ``differ`` or ``failed`` (either program exited non-zero or timed out)."""
    if rc_before != "0" or rc_after != "0":
        return "failed"
    return "same" if out_before == out_after else "differ"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixtures", type=Path, default=REPO / "fixtures")
    ap.add_argument("-k", dest="pattern", help="only cases whose name contains this")
    ap.add_argument("--python", default=sys.executable, help="interpreter to run cases")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--allow-cpu", action="store_true")
    ap.add_argument(
        "--verbose", "-v", action="store_true", help="show differing output"
    )
    args = ap.parse_args(argv)

    probe = subprocess.run(
        [args.python, "-c", PROBE], capture_output=True, text=True, timeout=300
    )
    if probe.returncode != 0:
        print(
            f"cannot import torch with {args.python}:\n{probe.stderr}", file=sys.stderr
        )
        return 2
    available, version, device = probe.stdout.strip().split("|")
    if available != "True" and not args.allow_cpu:
        print(
            f"torch {version}: torch.cuda.is_available() is False; this check needs a CUDA "
            "GPU (pass --allow-cpu to run it anyway)",
            file=sys.stderr,
        )
        return 2
    print(f"torch {version}, CUDA available: {available}, device: {device}")

    cases = find_cases(args.fixtures, args.pattern)
    if not cases:
        print(f"no <case>.before.py/<case>.after.py pairs under {args.fixtures}")
        return 2
    env = dict(os.environ, CUBLAS_WORKSPACE_CONFIG=":4096:8", PYTHONHASHSEED="0")
    width = max(len(c[0]) for c in cases)
    print(f"| {'case':{width}} | before rc | after rc | same output |")
    print(f"|{'-' * (width + 2)}|-----------|----------|-------------|")
    counts = {"same": 0, "differ": 0, "failed": 0}
    for name, before, after in cases:
        rb, ob, eb = run(args.python, before, args.timeout, env)
        ra, oa, ea = run(args.python, after, args.timeout, env)
        outcome = classify(rb, ra, ob, oa)
        counts[outcome] += 1
        mark = "yes" if ob == oa else "NO"
        if outcome == "failed":
            mark += " (failed)"
        print(f"| {name:{width}} | {rb:>9} | {ra:>8} | {mark:11} |")
        if args.verbose and outcome != "same":
            for label, out, err in (("before", ob, eb), ("after", oa, ea)):
                print(f"  --- {label} stdout (last 600 bytes):")
                print("  " + out[-600:].decode(errors="replace").replace("\n", "\n  "))
                if err.strip():
                    print(f"  --- {label} stderr (last 600 bytes):")
                    print(
                        "  " + err[-600:].decode(errors="replace").replace("\n", "\n  ")
                    )
    print(
        f"cuda-equivalence: {len(cases)} pairs, {counts['same']} same, "
        f"{counts['differ']} differ, {counts['failed']} failed; "
        f"cuda available: {available}"
    )
    return 0 if counts["same"] == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
