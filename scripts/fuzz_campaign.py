"""A long fuzzing campaign: the checks of tests/test_fuzz.py on many programs.

    python scripts/fuzz_campaign.py --programs 10000 --workers 2 --out fuzz-report.json

Prints the figures (programs tried, rejected as invalid input, and failures by
kind: crash, invalid output, not idempotent, comments or strings changed) and
writes the first failing programs of each kind to the report.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

KEEP = 5  # failing programs kept per kind


def _campaign(args) -> dict:
    seed, count, random_code = args
    from hypothesis import HealthCheck, Phase, given, seed as with_seed, settings

    from tests.test_fuzz import Failure, check, is_valid, programs

    figures: Counter = Counter()
    examples: dict = {}

    @with_seed(seed)
    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(programs(random_code=random_code))
    def one(source):
        figures["generated"] += 1
        if not is_valid(source):
            figures["rejected (invalid input)"] += 1
            return
        figures["tried"] += 1
        try:
            check(source)
        except Failure as failure:
            figures[failure.kind] += 1
            kept = examples.setdefault(failure.kind, [])
            if len(kept) < KEEP:
                kept.append({"source": source, "detail": str(failure)[:2000]})

    one()
    return {"figures": dict(figures), "examples": examples}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=multiprocessing.cpu_count())
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("fuzz-report.json"))
    options = parser.parse_args()
    # Half the programs are idioms only, half mix in hypothesmith's random code.
    per = max(1, options.programs // (2 * options.workers))
    tasks = [(options.seed + i, per, bool(i % 2)) for i in range(2 * options.workers)]
    started = time.monotonic()
    with multiprocessing.Pool(options.workers) as pool:
        parts = pool.map(_campaign, tasks)
    figures: Counter = Counter()
    examples: dict = {}
    for part in parts:
        figures.update(part["figures"])
        for kind, found in part["examples"].items():
            examples.setdefault(kind, []).extend(
                found[: KEEP - len(examples.get(kind, []))]
            )
    figures["seconds"] = round(time.monotonic() - started)
    options.out.write_text(
        json.dumps({"figures": figures, "examples": examples}, indent=2)
    )
    for key in (
        "generated",
        "rejected (invalid input)",
        "tried",
        "crash",
        "invalid",
        "not idempotent",
        "comments",
        "strings",
        "seconds",
    ):
        print(f"{key:>26}: {figures.get(key, 0)}")
    failures = sum(
        figures.get(k, 0)
        for k in ("crash", "invalid", "not idempotent", "comments", "strings")
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
