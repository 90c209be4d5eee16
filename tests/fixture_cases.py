"""Discovery of the golden fixtures: fixtures/<folder>/<case>.before.py and .after.py.

A rule's fixtures are in a folder named by its code (fixtures/TP301/, as Ruff names
its fixtures); the pass that owns the rule comes from the catalogue. The other
folders hold what is no single rule's: the device binding, formatting, f-strings,
notebooks, end-to-end training programs and whole programs (fixtures/programs/).

A fixture may start with a comment line ``# fixture-options: --target-torch 2.5
--unsafe-fixes --device-name DEV`` to run the case with other options.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import List

from codemod.model.options import Options
from codemod.model.rule import parse_version

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
# Whole programs, with their own tests (tests/test_programs.py).
PROGRAMS = FIXTURES / "programs"


def before_files() -> List[Path]:
    return sorted(p for p in FIXTURES.glob("*/*.before.py") if p.parent != PROGRAMS)


RULE_FOLDER = re.compile(r"TP\d{3}")


def rule_fixtures(pattern: str = "*.before.py") -> List[Path]:
    """The fixtures in the folders named by a rule code."""
    return sorted(
        p for p in FIXTURES.glob(f"*/{pattern}") if RULE_FOLDER.fullmatch(p.parent.name)
    )


def program_files() -> List[Path]:
    """fixtures/programs/<name>.before.py and the style goldens under style/."""
    return sorted(PROGRAMS.glob("*.before.py")) + sorted(
        PROGRAMS.glob("style/*.before.py")
    )


def case_id(before: Path) -> str:
    folder = before.parent.relative_to(FIXTURES).as_posix()
    return f"{folder}/{before.name.split('.before.', 1)[0]}"


def after_of(before: Path) -> Path:
    return before.with_name(before.name.replace(".before.py", ".after.py"))


def diagnostics_of(before: Path) -> Path:
    return before.with_name(before.name.replace(".before.py", ".diagnostics.txt"))


def options_of(source: str) -> Options:
    first = source.splitlines()[0] if source else ""
    args = (
        shlex.split(first.split(":", 1)[1])
        if first.startswith("# fixture-options:")
        else []
    )
    values = {
        "target_torch": (2, 10),
        "unsafe_fixes": False,
    }
    while args:
        flag = args.pop(0)
        if flag == "--target-torch":
            values["target_torch"] = parse_version(args.pop(0))
        elif flag == "--unsafe-fixes":
            values["unsafe_fixes"] = True
        elif flag == "--device-name":
            values["device_name"] = args.pop(0)
        else:
            raise ValueError(f"unknown fixture option {flag}")
    return Options(**values)


def run_program(python: str, path: Path, cwd: Path) -> subprocess.CompletedProcess:
    """Run a fixture program as CI does: on the CPU, with a fixed hash seed."""
    env = dict(os.environ, PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="")
    return subprocess.run(
        [python, str(path)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
