#!/usr/bin/env python
"""Port real projects library-only and check that their own tests pass as before.

Usage::

    python scripts/peer_check.py --project NAME=SOURCE[:PACKAGE] --python NAME=PY \\
        --tests NAME="tests/test_a.py tests/test_b.py" [--torchport CMD] [--keep]

or with the projects listed in a JSON file (``--config peers.json``)::

    [{"name": "litgpt", "source": "/src/litgpt", "package": "litgpt",
      "python": "/venvs/litgpt/bin/python", "tests": ["tests/test_utils.py"]}]

For each project the checkout (never modified) is copied to a temporary folder; the
chosen tests run there with the project's own interpreter (its dependencies in its
own virtualenv, the copy first on ``PYTHONPATH``), torchport then rewrites the
package folder alone (``CMD fix PACKAGE``, run from the copy: the tests are not
named, as a user ports a library), and the same tests run again. One markdown row
per project:

``tests``        test cases pytest ran before the port
``passed``       passed before -> after
``broken``       passed before, not after (must be 0); listed with ``--verbose``
``fixed``        did not pass before, pass after
``changed``      files the port changed
``port``         torchport's summary line

Each case's outcome is read from pytest's JUnit XML, not from its output. The
default command is ``<python> -m codemod`` with the repository root on
``PYTHONPATH``. Exit status 1 when any project has a broken test or a run failed.
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
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

REPO = Path(__file__).resolve().parent.parent
SKIP = shutil.ignore_patterns(".git", "__pycache__", ".pytest_cache")
PASSED = "passed"


@dataclass
class Project:
    name: str
    source: Path
    package: str
    python: str
    tests: List[str]
    timeout: int = 1800


@dataclass
class Row:
    name: str
    before: Dict[str, str] = field(default_factory=dict)  # case -> outcome
    after: Dict[str, str] = field(default_factory=dict)
    changed: int = 0
    port: str = ""
    problems: List[str] = field(default_factory=list)

    COLUMNS = ("project", "tests", "passed", "broken", "fixed", "changed", "port")

    def broken(self) -> List[str]:
        return sorted(
            c
            for c, o in self.before.items()
            if o == PASSED and self.after.get(c) != PASSED
        )

    def fixed(self) -> List[str]:
        return sorted(
            c
            for c, o in self.after.items()
            if o == PASSED and self.before.get(c) != PASSED
        )

    def cells(self) -> List[str]:
        passed = [
            sum(o == PASSED for o in r.values()) for r in (self.before, self.after)
        ]
        return [
            self.name,
            str(len(self.before)),
            f"{passed[0]} -> {passed[1]}",
            str(len(self.broken())),
            str(len(self.fixed())),
            str(self.changed),
            self.port,
        ]


def outcomes(junit: Path) -> Dict[str, str]:
    """Each test case of a JUnit XML report -> passed, failed, error or skipped."""
    found: Dict[str, str] = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome = PASSED
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                break
        found[name] = outcome
    return found


def run_tests(project: Project, folder: Path, junit: Path) -> Optional[str]:
    """Run the project's chosen tests in ``folder``; a problem line, or None."""
    env = dict(os.environ, PYTHONPATH=str(folder), PYTHONDONTWRITEBYTECODE="1")
    command = [project.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["--color=no", f"--junitxml={junit}", *project.tests]
    try:
        proc = subprocess.run(
            command,
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=project.timeout,
        )
    except subprocess.TimeoutExpired:
        return f"tests timed out after {project.timeout} s"
    if not junit.exists():
        return f"pytest wrote no report (exit {proc.returncode}): {proc.stderr[-300:]}"
    return None


def port(project: Project, folder: Path, torchport: Sequence[str]) -> tuple:
    """Rewrite the package folder alone; (files changed, summary line, problem)."""
    before = _snapshot(folder)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [*torchport, "fix", project.package],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    changed = sum(1 for p, data in _snapshot(folder).items() if before.get(p) != data)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    summary = "; ".join(
        line for line in lines if line.startswith(("Rewrote", "torchport read"))
    )
    problem = None
    if proc.returncode not in (0, 1) or "Traceback" in proc.stderr:
        problem = f"torchport exited {proc.returncode}: {proc.stderr[-300:]}"
    return changed, summary, problem


def _snapshot(folder: Path) -> Dict[str, bytes]:
    return {str(p): p.read_bytes() for p in folder.rglob("*.py") if p.is_file()}


def check(project: Project, torchport: Sequence[str], keep: bool = False) -> Row:
    row = Row(project.name)
    work = Path(tempfile.mkdtemp(prefix=f"peer-{project.name}-"))
    copy = work / project.name
    try:
        shutil.copytree(project.source, copy, ignore=SKIP, symlinks=True)
        for stage, results in (("before", row.before), ("after", None)):
            if results is None:
                row.changed, row.port, problem = port(project, copy, torchport)
                if problem:
                    row.problems.append(problem)
                    break
                results = row.after
            junit = work / f"{stage}.xml"
            problem = run_tests(project, copy, junit)
            if problem:
                row.problems.append(f"{stage}: {problem}")
                break
            results.update(outcomes(junit))
    finally:
        if keep:
            print(f"{project.name}: kept {copy}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return row


def table(rows: Sequence[Row]) -> str:
    lines = ["| " + " | ".join(Row.COLUMNS) + " |"]
    lines.append("|" + "|".join("---" for _ in Row.COLUMNS) + "|")
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def projects_from(args) -> List[Project]:
    found: List[Project] = []
    if args.config:
        for entry in json.loads(Path(args.config).read_text(encoding="utf-8")):
            found.append(
                Project(
                    entry["name"],
                    Path(entry["source"]),
                    entry.get("package", entry["name"]),
                    entry.get("python", sys.executable),
                    list(entry["tests"]),
                    int(entry.get("timeout", args.timeout)),
                )
            )
    pythons = dict(_pair(p) for p in args.python)
    tests = dict(_pair(t) for t in args.tests)
    for spec in args.project:
        name, source = _pair(spec)
        source, _, package = source.partition(":")
        found.append(
            Project(
                name,
                Path(source),
                package or name,
                pythons.get(name, sys.executable),
                shlex.split(tests.get(name, "tests")),
                args.timeout,
            )
        )
    return found


def _pair(text: str) -> tuple:
    name, sep, value = text.partition("=")
    if not sep:
        raise SystemExit(f"expected NAME=VALUE, got {text!r}")
    return name, value


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", help="a JSON list of projects")
    parser.add_argument("--project", action="append", default=[])
    parser.add_argument("--python", action="append", default=[])
    parser.add_argument("--tests", action="append", default=[])
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument(
        "--torchport", default=f"{shlex.quote(sys.executable)} -m codemod"
    )
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    projects = projects_from(args)
    if not projects:
        parser.error("no project given (--project or --config)")
    rows = [check(p, shlex.split(args.torchport), args.keep) for p in projects]
    print(table(rows))
    failing = False
    for row in rows:
        for problem in row.problems:
            print(f"{row.name}: {problem}")
        if args.verbose:
            for case in row.broken():
                print(f"{row.name}: broken {case} ({row.after.get(case, 'not run')})")
            for case in row.fixed():
                print(f"{row.name}: fixed {case}")
        failing = failing or bool(row.problems or row.broken())
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
