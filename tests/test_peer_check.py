"""scripts/peer_check.py: how it reads a test run and what it counts as a test the
port broke."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import peer_check  # noqa: E402

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.test_a" name="test_ok" time="0.1"/>
<testcase classname="tests.test_a" name="test_bad"><failure message="x"/></testcase>
<testcase classname="tests.test_a" name="test_gone"><error message="y"/></testcase>
<testcase classname="tests.test_b" name="test_skip"><skipped message="z"/></testcase>
</testsuite></testsuites>
"""


def test_each_case_outcome_is_read_from_the_junit_report(tmp_path):
    (tmp_path / "r.xml").write_text(JUNIT)
    assert peer_check.outcomes(tmp_path / "r.xml") == {
        "tests.test_a::test_ok": "passed",
        "tests.test_a::test_bad": "failed",
        "tests.test_a::test_gone": "error",
        "tests.test_b::test_skip": "skipped",
    }


def test_a_case_that_passed_and_no_longer_does_or_runs_is_broken():
    row = peer_check.Row("p")
    row.before = {"a": "passed", "b": "passed", "c": "failed", "d": "passed"}
    row.after = {"a": "passed", "b": "failed", "c": "passed"}  # d did not run
    assert row.broken() == ["b", "d"] and row.fixed() == ["c"]
    assert row.cells()[:5] == ["p", "4", "3 -> 2", "2", "1"]


def test_projects_are_read_from_the_command_line(tmp_path):
    args = [
        "--project",
        f"lib={tmp_path}:src",
        "--python",
        "lib=/venv/bin/python",
        "--tests",
        "lib=tests/test_a.py -k fast",
    ]
    parser_args = peer_check.argparse.Namespace(
        config=None, project=[args[1]], python=[args[3]], tests=[args[5]], timeout=9
    )
    (project,) = peer_check.projects_from(parser_args)
    assert (project.name, project.source, project.package) == ("lib", tmp_path, "src")
    assert project.python == "/venv/bin/python"
    assert project.tests == ["tests/test_a.py", "-k", "fast"]


MODULE = "import torch\n\n\ndef count():\n    return torch.cuda.device_count()\n"
OTHER = "import torch\n\n\ndef sync():\n    torch.cuda.synchronize()\n"
TEST = """from unittest import mock

from pkg import utils


def test_count():
    with mock.patch("pkg.utils.torch.cuda.device_count", return_value=3):
        assert utils.count() == 3
"""


@pytest.mark.slow
def test_a_library_ported_alone_keeps_passing_its_tests(tmp_path):
    source = tmp_path / "proj"
    (source / "pkg").mkdir(parents=True)
    (source / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    (source / "pkg" / "__init__.py").write_text("")
    (source / "pkg" / "utils.py").write_text(MODULE)
    (source / "pkg" / "other.py").write_text(OTHER)
    (source / "tests").mkdir()
    (source / "tests" / "test_utils.py").write_text(TEST)
    project = peer_check.Project("proj", source, "pkg", sys.executable, ["tests"])
    row = peer_check.check(project, [sys.executable, "-m", "codemod"])
    assert row.problems == []
    assert row.before == row.after == {"tests.test_utils::test_count": "passed"}
    assert row.changed == 1  # other.py; utils.py keeps what the test patches
    assert "read the project's 1 test file outside the run" in row.port
    assert (source / "pkg" / "other.py").read_text() == OTHER  # never touched
