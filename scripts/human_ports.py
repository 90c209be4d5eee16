#!/usr/bin/env python
"""Compare torchport with the ports a project's maintainers made by hand.

Usage::

    python scripts/human_ports.py GIT_DIR [COMMIT ...] [--grep accelerator]
                                  [--args "--target-torch 2.6"] [--verbose] [--json]

Each COMMIT (or, with ``--grep``, each commit whose message matches) is a migration made
by hand: for every Python file it modified, the file before the commit is the *original*,
the file after it the *human port*.  The original is also ported by torchport (in a
temporary folder, ``torchport --output-format json``, then a second run whose
diagnostics are kept).  The census (``scripts/census.py``, stdlib ``ast``) lists the
CUDA-specific sites of the three versions; sites are matched by file, kind and source
text.

Per commit and in total it prints:

``human``     sites of the original the human port no longer has
``both``      of these, sites torchport's port no longer has either
``missed``    the rest: sites the humans ported and torchport kept
``reported``  of the missed sites, those a diagnostic of torchport's second run names on
              their line (a missed site with no diagnostic is a silent one)
``ratio``     both / human

``--verbose`` lists each missed site.  Nothing is written into GIT_DIR; nothing here
imports ``codemod``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from census import run_census  # noqa: E402
from realcode_check import REPO, default_command, diag_key, run_tool  # noqa: E402


@dataclass
class Comparison:
    commit: str
    files: int = 0
    human: int = 0
    both: int = 0
    reported: int = 0
    missed_sites: list = field(default_factory=list)

    @property
    def missed(self) -> int:
        return self.human - self.both

    @property
    def ratio(self) -> float:
        return self.both / self.human if self.human else 1.0


def _git(git_dir: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], capture_output=True, check=False
    )


def commits_matching(git_dir: str, pattern: str) -> list[str]:
    out = _git(git_dir, "log", "--format=%H", "-i", f"--grep={pattern}").stdout
    return out.decode().split()


def modified_python_files(git_dir: str, commit: str) -> list[str]:
    out = _git(
        git_dir,
        "diff-tree",
        "-r",
        "--no-commit-id",
        "--name-status",
        f"{commit}^",
        commit,
    ).stdout.decode()
    files = []
    for line in out.splitlines():
        status, _, path = line.partition("\t")
        if status == "M" and path.endswith(".py"):
            files.append(path)
    return files


def _blob(git_dir: str, commit: str, path: str) -> bytes | None:
    shown = _git(git_dir, "show", f"{commit}:{path}")
    return shown.stdout if shown.returncode == 0 else None


def site_lines(folder: Path) -> dict:
    """The census sites of ``folder``, keyed by file, kind and source text: their lines."""
    sites, _ = run_census([folder])
    lines: dict = {}
    for s in sites:
        key = (os.path.relpath(s.path, folder), s.kind, s.snippet)
        lines.setdefault(key, []).append(s.line)
    return lines


def _counts(lines: dict) -> Counter:
    return Counter({key: len(at) for key, at in lines.items()})


def compare(
    original: Path, human: Path, port: Path, diagnosed: set[tuple[str, int]]
) -> Comparison:
    """Sites removed by the humans and by torchport, three folders of the same files."""
    result = Comparison(commit="")
    port_lines = site_lines(port)
    before = _counts(site_lines(original))
    by_human, by_tool = _counts(site_lines(human)), _counts(port_lines)
    removed_by_human = before - by_human
    removed_by_tool = before - by_tool
    result.human = sum(removed_by_human.values())
    result.both = sum((removed_by_human & removed_by_tool).values())
    for key, n in (removed_by_human - removed_by_tool).items():
        lines = port_lines.get(key, [])
        for line in lines[:n]:
            named = (os.path.realpath(port / key[0]), line) in diagnosed
            result.reported += named
            result.missed_sites.append(
                f"{key[0]}:{line}: {key[1]} {key[2]}"
                + ("" if named else "  [no diagnostic]")
            )
    return result


def check_commit(
    git_dir: str, commit: str, cmd: list[str], timeout: float
) -> Comparison | None:
    files = modified_python_files(git_dir, commit)
    tmp = Path(tempfile.mkdtemp(prefix="human-ports-"))
    try:
        kept = 0
        for path in files:
            old, new = _blob(git_dir, f"{commit}^", path), _blob(git_dir, commit, path)
            if old is None or new is None:
                continue
            for folder, data in (("original", old), ("human", new), ("port", old)):
                target = tmp / folder / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            kept += 1
        if not kept:
            return None
        env = dict(os.environ, NO_COLOR="1")
        env["PYTHONPATH"] = os.pathsep.join(
            [str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
        )
        run_tool(cmd, tmp / "port", timeout, env)
        second = run_tool(cmd, tmp / "port", timeout, env)
        diagnosed = {diag_key(d, tmp) for d in second["diags"]}
        result = compare(tmp / "original", tmp / "human", tmp / "port", diagnosed)
        result.commit, result.files = commit[:10], kept
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("git_dir")
    ap.add_argument("commits", nargs="*")
    ap.add_argument("--grep", help="take the commits whose message matches")
    ap.add_argument("--torchport", help="command to run (default: this checkout)")
    ap.add_argument("--args", default="", help="extra torchport options")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    commits = list(args.commits)
    if args.grep:
        commits += commits_matching(args.git_dir, args.grep)
    cmd = shlex.split(args.torchport) if args.torchport else default_command()
    cmd += shlex.split(args.args)
    results = [
        r
        for c in commits
        if (r := check_commit(args.git_dir, c, cmd, args.timeout)) and r.human
    ]
    total = Comparison("total")
    for r in results:
        total.files += r.files
        total.human += r.human
        total.both += r.both
        total.reported += r.reported
    if args.json:
        rows = [asdict(r) | {"ratio": r.ratio} for r in results + [total]]
        print(json.dumps(rows, indent=1))
        return 0
    print("| commit | files | human | both | missed | reported | ratio |")
    print("|---|---|---|---|---|---|---|")
    for r in results + [total]:
        print(
            f"| {r.commit} | {r.files} | {r.human} | {r.both} | {r.missed} "
            f"| {r.reported} | {r.ratio:.2f} |"
        )
        if args.verbose:
            for site in r.missed_sites:
                print(f"  missed: {site}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
