"""Every output format is complete and parseable: diagnostics with start and end,
fixes with their edits, and files that could not be processed as records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli_helpers import ROOT, run_cli

CUDA = (
    "import torch\n\n"
    "x = torch.ones(2).cuda()\n"
    "torch.cuda.synchronize()\n"
    'DEVICES = ["cuda", "cpu"]\n'
    "torch.backends.cudnn.benchmark = True\n"
    "print(x.sum().item(), DEVICES)\n"
)
BROKEN = "x = torch.cuda(\n"
SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "train.py").write_text(CUDA)
    (tmp_path / "broken.py").write_text(BROKEN)
    shutil.copy(
        ROOT / "fixtures" / "notebooks" / "training.before.ipynb",
        tmp_path / "nb.ipynb",
    )
    return tmp_path


def test_diff_prints_only_the_diff_and_one_summary_line(project):
    proc = run_cli(
        ["--diff", "--output-format", "json", "train.py", "nb.ipynb"], cwd=project
    )
    assert proc.returncode == 1
    # In the order of the paths, as every output lists them.
    assert proc.stdout.startswith("--- a/nb.ipynb\n+++ b/nb.ipynb\n@@ ")
    assert "\n--- a/train.py\n+++ b/train.py\n@@ " in proc.stdout
    assert all(line[:1] in "+- @\\" for line in proc.stdout.splitlines())
    assert proc.stderr.splitlines() == [
        "Would rewrite 2 of 2 files (6 sites); 2 sites left (1 informational);"
        " 0 errors",
        "1 site that no fix rewrites is not in the diff and fails the check"
        " (exit 1): `torchport check` lists them",
    ]


def test_json_is_complete_under_check(project):
    proc = run_cli(["check", "--output-format", "json", "."], cwd=project)
    assert proc.returncode == 2  # the broken file
    records = json.loads(proc.stdout)
    errors = [r for r in records if r["type"] == "error"]
    assert [(r["filename"], r["name"], r["location"]) for r in errors] == [
        ("broken.py", "parse-error", {"row": 1, "column": 1})
    ]
    assert "cannot parse" in errors[0]["message"]
    sites = [r for r in records if r["filename"] == "train.py"]
    by_code = {r["code"]: r for r in sites}
    assert set(by_code) == {"TP201", "TP304", "TP109", "TP601"}
    cuda = by_code["TP201"]
    assert cuda["location"] == {"row": 3, "column": 5}
    assert cuda["end_location"] == {"row": 3, "column": 25}
    assert cuda["state"] == "would-rewrite" and cuda["severity"] == "error"
    # Nothing was written, so nothing is "applied".
    assert cuda["fix"]["applicability"] == "safe" and cuda["fix"]["applied"] is False
    assert by_code["TP601"]["severity"] == "info" and by_code["TP601"]["fix"] is None
    assert by_code["TP109"]["state"] == "reported"
    assert {r["cell"] for r in records if r["filename"] == "nb.ipynb"} == {3, 4, 6}


def _apply(text: str, edits) -> str:
    lines = text.splitlines(keepends=True)
    unique = {
        (e["location"]["row"], e["end_location"]["row"], e["content"]) for e in edits
    }
    for start, end, content in sorted(unique, reverse=True):
        lines[start - 1 : end - 1] = [content]
    return "".join(lines)


def test_json_edits_reproduce_the_rewrite(project, tmp_path):
    records = json.loads(
        run_cli(["check", "--output-format", "json", "train.py"], cwd=project).stdout
    )
    edits = [e for r in records if r["fix"] for e in r["fix"]["edits"]]
    assert edits, records
    predicted = _apply(CUDA, edits)
    run_cli(["fix", "train.py"], cwd=project)
    assert predicted == (project / "train.py").read_text()


def test_json_after_writing_says_applied(project):
    args = ["fix", "--show-fixes", "--output-format", "json", "train.py"]
    records = json.loads(run_cli(args, cwd=project).stdout)
    fixed = [r for r in records if r["state"] == "rewritten"]
    assert fixed and all(r["fix"]["applied"] for r in fixed)


def test_github_annotates_errors_and_notices(project):
    proc = run_cli(["check", "--output-format", "github", "."], cwd=project)
    lines = proc.stdout.splitlines()
    assert "::error title=torchport parse-error,file=broken.py,line=1::" in "\n".join(
        lines
    )
    notice = next(line for line in lines if "TP601" in line)
    assert notice.startswith("::notice ")
    assert any(line.startswith("::warning ") and "TP109" in line for line in lines)


def test_sarif_validates_against_the_official_schema(project):
    jsonschema = pytest.importorskip("jsonschema")
    proc = run_cli(["check", "--output-format", "sarif", "."], cwd=project)
    log = json.loads(proc.stdout)
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema)
    problems = sorted(validator.iter_errors(log), key=str)
    assert not problems, "\n".join(str(p.message) for p in problems[:5])
    run = log["runs"][0]
    assert run["tool"]["driver"]["name"] == "torchport"
    results = run["results"]
    assert {r["ruleId"] for r in results} >= {"TP201", "TP109", "TP601"}
    rules = run["tool"]["driver"]["rules"]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    info = next(r for r in results if r["ruleId"] == "TP601")
    assert info["level"] == "note"
    notifications = run["invocations"][0]["toolExecutionNotifications"]
    assert [
        n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for n in notifications
    ] == ["broken.py"]
    assert run["invocations"][0]["executionSuccessful"] is False


def test_sarif_of_a_clean_project_is_valid_and_empty(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    (tmp_path / "a.py").write_text("print('no accelerator')\n")
    proc = run_cli(["check", "--output-format", "sarif", "."], cwd=tmp_path)
    assert proc.returncode == 0
    log = json.loads(proc.stdout)
    jsonschema.validate(log, json.loads(SCHEMA.read_text(encoding="utf-8")))
    assert log["runs"][0]["results"] == []


def test_the_schema_file_is_the_official_one():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["title"].startswith(
        "Static Analysis Results Format (SARIF) Version 2.1.0"
    )
    assert (SCHEMA.parent / "sarif-schema-2.1.0.LICENSE.md").is_file()


def test_json_from_stdin_includes_a_parse_error(tmp_path):
    proc = run_cli(
        ["check", "--output-format", "json", "-"], cwd=tmp_path, input=BROKEN.encode()
    )
    assert proc.returncode == 2
    [record] = json.loads(proc.stdout)
    assert record["type"] == "error" and record["name"] == "parse-error"
