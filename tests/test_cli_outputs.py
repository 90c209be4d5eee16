"""The formats Ruff users reach for (junit, gitlab, pylint), the fix shown by
`full`, the JSON record's rule `url` and a fix message that says what it does,
sites in path order, and what a run that could not write a file says of it."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree

import pytest

from tests.cli_helpers import CUDA, run_cli

UNFIXABLE = 'import torch\nDEVICES = ["cuda", "cpu"]\n'
INFO = "import torch\ntorch.backends.cudnn.benchmark = True\n"


def _tree(root):
    (root / "a").mkdir()
    (root / "b").mkdir()
    (root / "main.py").write_text(CUDA)
    (root / "a.py").write_text(UNFIXABLE)
    (root / "a" / "z.py").write_text(INFO)
    (root / "b" / "c.py").write_text("x = torch.cuda(\n")  # does not parse
    return root


def test_junit_is_a_test_report_ci_can_read(tmp_path):
    proc = run_cli(["check", "--output-format", "junit", "."], cwd=_tree(tmp_path))
    assert proc.returncode == 2  # the file that does not parse
    suites = ElementTree.fromstring(proc.stdout)
    assert suites.tag == "testsuites"
    assert (suites.get("tests"), suites.get("failures"), suites.get("errors")) == (
        "4",
        "2",
        "1",
    )
    cases = {
        (suite.get("name"), case.get("name")): [child.tag for child in case]
        for suite in suites
        for case in suite
    }
    assert cases == {
        ("a/z.py", "torchport.TP601"): ["system-out"],  # informational: passes
        ("a.py", "torchport.TP109"): ["failure"],
        ("b/c.py", "torchport.parse-error"): ["error"],
        ("main.py", "torchport.TP201"): ["failure"],  # `fix` would rewrite it
    }


def test_junit_escapes_what_xml_cannot_hold(tmp_path):
    name = "a<&\x1b[31m>.py"
    (tmp_path / name).write_text(UNFIXABLE)
    proc = run_cli(["check", "--output-format", "junit", "."], cwd=tmp_path)
    suite = ElementTree.fromstring(proc.stdout)[0]
    assert suite.get("name") == "a<&\\x1b[31m>.py"


def test_gitlab_is_a_code_quality_report(tmp_path):
    _tree(tmp_path)
    proc = run_cli(["check", "--output-format", "gitlab", "."], cwd=tmp_path)
    issues = json.loads(proc.stdout)
    shown = [(i["location"]["path"], i["check_name"], i["severity"]) for i in issues]
    assert shown == [
        ("a/z.py", "TP601", "info"),
        ("a.py", "TP109", "major"),
        ("main.py", "TP201", "major"),
        ("b/c.py", "parse-error", "critical"),
    ]
    for issue in issues:
        assert issue["description"] and issue["location"]["lines"]["begin"] >= 1
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    # A line added above a site moves it, and keeps its fingerprint.
    (tmp_path / "a.py").write_text("# a comment\n" + UNFIXABLE)
    again = json.loads(
        run_cli(["check", "--output-format", "gitlab", "."], cwd=tmp_path).stdout
    )
    assert again[1]["location"]["lines"]["begin"] == 3
    assert again[1]["fingerprint"] == issues[1]["fingerprint"]


def test_pylint_is_one_line_a_site(tmp_path):
    _tree(tmp_path)
    proc = run_cli(["check", "--output-format", "pylint", "."], cwd=tmp_path)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("a/z.py:2: [TP601] (info) ")
    assert lines[1].startswith("a.py:2: [TP109] hard-coded")
    assert lines[2].startswith("main.py:3: [TP201] `.cuda()`")
    assert lines[3].startswith("b/c.py:1: [parse-error] ")


def test_sites_are_in_path_order(tmp_path):
    _tree(tmp_path)
    proc = run_cli(["check", "."], cwd=tmp_path)
    paths = [line.split(":")[0] for line in proc.stdout.splitlines()]
    assert paths == ["a/z.py", "a.py", "main.py"]


def test_full_shows_the_fix(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["check", "--output-format", "full", "a.py"], cwd=tmp_path)
    fix = proc.stdout.split("  Safe fix:\n", 1)[1]
    assert "  3 - x = torch.ones(2).cuda()\n" in fix
    assert "    + x = torch.ones(2).to(_DEVICE())\n" in fix
    assert "    + def _DEVICE():\n" in fix


def test_json_names_the_rule_page_and_what_the_fix_does(tmp_path):
    (tmp_path / "a.py").write_text(CUDA + UNFIXABLE.replace("import torch\n", ""))
    proc = run_cli(["check", "--output-format", "json", "a.py"], cwd=tmp_path)
    fixed, reported = json.loads(proc.stdout)
    assert fixed["url"].endswith("/docs/rules.md#tp201-cuda-method")
    assert reported["url"].endswith("/docs/rules.md#tp109-cuda-string-unknown-context")
    assert fixed["fix"]["message"] == (
        "Replace `x = torch.ones(2).cuda()` with `x = torch.ones(2).to(_DEVICE())`"
    )


def test_informational_sites_do_not_ask_for_a_noqa():
    """An informational site fails nothing: a `# noqa` for it suppresses nothing
    that matters, so no message asks for one."""
    from codemod.rules import all_rules

    asking = [
        r.code
        for r in all_rules().values()
        if r.severity == "info" and "noqa" in r.message
    ]
    assert asking == []


def _chattr(flag: str, path) -> bool:
    chattr = shutil.which("chattr")
    return chattr is not None and (
        subprocess.run([chattr, flag, str(path)], capture_output=True).returncode == 0
    )


def test_a_file_that_could_not_be_written_leaves_its_sites_where_they_are(tmp_path):
    target = tmp_path / "a.py"
    target.write_text(CUDA + UNFIXABLE.replace("import torch\n", ""))
    if not _chattr("+i", target):
        pytest.skip("chattr +i is refused here (file system or capabilities)")
    try:
        proc = run_cli(["a.py"], cwd=tmp_path)
    finally:
        _chattr("-i", target)
    assert proc.returncode == 2
    assert [line.split(": ")[0] for line in proc.stdout.splitlines()] == [
        "a.py:3:5",
        "a.py:5:12",
    ]
    assert "TP201 `.cuda()`" in proc.stdout  # left, not marked [*]
    assert "Rewrote 0 of 1 file (0 sites); 2 sites left; 1 error" in proc.stderr
