#!/usr/bin/env python
"""Check that a release's version is the same everywhere, and tag it.

Usage::

    python scripts/release.py [--root DIR]               # check only
    python scripts/release.py --tag [--commit REV] [--root DIR]

The version is ``__version__`` in ``codemod/__init__.py``. It must be the newest
entry of CHANGELOG.md (``## X.Y.Z (date)``), every ``rev: vX.Y.Z`` and
``@vX.Y.Z`` of README.md and ``.pre-commit-hooks.yaml``, and the release in the
rules' documentation links (``RULES_URL``, SARIF's ``helpUri``). Printed: what
was checked, and whether the tag ``vX.Y.Z`` exists.

``--tag`` then creates the annotated tag ``vX.Y.Z`` on the commit that set the
version (the oldest commit of HEAD's history whose ``codemod/__init__.py`` holds
it; ``--commit`` names another), after checking that commit's own files agree.
The tag is made in this clone only: publish it with ``git push origin vX.Y.Z``,
or pre-commit's ``rev:`` and ``pip install ...@vX.Y.Z`` cannot find it. An
existing tag is never moved. Exit status: 0 when everything agrees (and the tag
was made or is already right), 1 when something disagrees, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable, List, Optional

ROOT = Path(__file__).resolve().parent.parent
VERSION_FILE = "codemod/__init__.py"
VERSION = re.compile(r'^__version__ = "(\d+\.\d+\.\d+)"$', re.MULTILINE)
CHANGELOG_ENTRY = re.compile(r"^## (\d+\.\d+\.\d+)", re.MULTILINE)
# The versions a document names for users to install: pre-commit's rev:, pip's
# @vX.Y.Z, and a link into the repository at a release (/vX.Y.Z/).
NAMED = re.compile(r"(?:rev: |@|/)v(\d+\.\d+\.\d+)\b")


def named_versions(text: str) -> List[str]:
    """The versions ``text`` tells users to install or read, in order, once each."""
    return list(dict.fromkeys(NAMED.findall(text)))


def version_of(text: str) -> Optional[str]:
    found = VERSION.search(text)
    return found.group(1) if found else None


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )


def problems(read: Callable[[str], Optional[str]]) -> List[str]:
    """What disagrees with the version, in the files ``read(path)`` returns (None:
    no such file); empty when the release is consistent."""
    version = version_of(read(VERSION_FILE) or "")
    if version is None:
        return [f'{VERSION_FILE}: no __version__ = "X.Y.Z"']
    found = []
    entries = CHANGELOG_ENTRY.findall(read("CHANGELOG.md") or "")
    if not entries or entries[0] != version:
        newest = entries[0] if entries else "none"
        found.append(f"CHANGELOG.md: the newest entry is {newest}, not {version}")
    for path in ("README.md", ".pre-commit-hooks.yaml", "codemod/output/docs.py"):
        text = read(path)
        if text is None:
            found.append(f"{path}: missing")
            continue
        others = [v for v in named_versions(text) if v != version]
        if others:
            found.append(f"{path}: names v{', v'.join(others)}, not v{version}")
        elif path != "codemod/output/docs.py" and f"v{version}" not in text:
            found.append(f"{path}: names no v{version}")
    return found


def _reader_at(root: Path, commit: Optional[str]) -> Callable[[str], Optional[str]]:
    def read(path: str) -> Optional[str]:
        if commit is None:
            try:
                return (root / path).read_text(encoding="utf-8")
            except OSError:
                return None
        shown = _git(root, "show", f"{commit}:{path}")
        return shown.stdout if shown.returncode == 0 else None

    return read


def release_commit(root: Path, version: str) -> Optional[str]:
    """The oldest commit of HEAD's history whose version file holds ``version``."""
    log = _git(
        root,
        "log",
        "--reverse",
        "--format=%H",
        f'-S__version__ = "{version}"',
        "HEAD",
        "--",
        VERSION_FILE,
    )
    for commit in log.stdout.split():
        if version_of(_reader_at(root, commit)(VERSION_FILE) or "") == version:
            return commit
    return None


def tagged_commit(root: Path, version: str) -> Optional[str]:
    shown = _git(root, "rev-parse", "--verify", "--quiet", f"v{version}^{{commit}}")
    return shown.stdout.strip() if shown.returncode == 0 else None


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository")
    parser.add_argument("--tag", action="store_true", help="create the tag vX.Y.Z")
    parser.add_argument(
        "--commit", help="the commit to tag (default: the one that" " set the version)"
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    found = problems(_reader_at(root, None))
    version = version_of(_reader_at(root, None)(VERSION_FILE) or "")
    for line in found:
        print(f"release: {line}", file=sys.stderr)
    if found or version is None:
        return 1
    tag = f"v{version}"
    print(
        f"release: version {version} agrees in {VERSION_FILE}, CHANGELOG.md,"
        " README.md, .pre-commit-hooks.yaml and the rule links"
    )
    existing = tagged_commit(root, version)
    if not args.tag:
        where = f"tag {tag} exists ({existing[:12]})" if existing else f"no tag {tag}"
        print(f"release: {where}")
        return 0
    commit = args.commit or release_commit(root, version)
    if commit is None:
        print(f"release: no commit of HEAD's history sets {version}", file=sys.stderr)
        return 1
    resolved = _git(root, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    if resolved.returncode != 0:
        print(f"release: {commit}: no such commit", file=sys.stderr)
        return 2
    commit = resolved.stdout.strip()
    if existing is not None:
        if existing != commit:
            print(
                f"release: tag {tag} exists on {existing[:12]}, not {commit[:12]};"
                " a published tag is never moved",
                file=sys.stderr,
            )
            return 1
        print(f"release: tag {tag} is already on {commit[:12]}")
        return 0
    at_commit = problems(_reader_at(root, commit))
    for line in at_commit:
        print(f"release: at {commit[:12]}: {line}", file=sys.stderr)
    if at_commit:
        return 1
    made = _git(root, "tag", "-a", tag, "-m", f"torchport {version}", commit)
    if made.returncode != 0:
        print(f"release: git tag failed: {made.stderr.strip()}", file=sys.stderr)
        return 1
    print(f"release: tagged {commit[:12]} {tag}; publish it: git push origin {tag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
