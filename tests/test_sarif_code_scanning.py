"""SARIF that code scanning shows as the check sees it: every
site that fails the check is a warning, each rule links its documentation, fixes
carry their edits, notebook sites point at their line of the .ipynb; validated
against the official SARIF 2.1.0 schema (tests/data, vendored with its license)."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.cli_helpers import ROOT, run_cli

SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"
CUDA = (
    "import torch\n\n"
    "x = torch.ones(2).cuda()\n"
    "y = torch.zeros(3).cuda()\n"
    "torch.cuda.synchronize()\n"
    'DEVICES = ["cuda", "cpu"]\n'
    "torch.backends.cudnn.benchmark = True\n"
    "print(x, y, DEVICES)\n"
)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "train.py").write_text(CUDA)
    shutil.copy(
        ROOT / "fixtures" / "notebooks" / "training.before.ipynb", tmp_path / "nb.ipynb"
    )
    return tmp_path


def _sarif(project, *args):
    proc = run_cli(["check", "--output-format", "sarif", *args, "."], cwd=project)
    return proc, json.loads(proc.stdout)


def _valid(log):
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft4Validator(
        json.loads(SCHEMA.read_text(encoding="utf-8"))
    )
    problems = sorted(validator.iter_errors(log), key=str)
    assert not problems, "\n".join(p.message for p in problems[:5])


def test_every_site_the_check_fails_on_is_a_warning(project):
    proc, log = _sarif(project)
    _valid(log)
    records = json.loads(
        run_cli(["check", "--output-format", "json", "."], cwd=project).stdout
    )
    failing = [r for r in records if r["severity"] == "error"]
    results = log["runs"][0]["results"]
    shown = [r for r in results if r["kind"] == "fail" and r["level"] == "warning"]
    assert len(shown) == len(failing) and len(failing) > 4
    assert all(r["kind"] == "fail" for r in results)
    notes = [r for r in results if r["level"] == "note"]
    assert {r["ruleId"] for r in notes} == {"TP601"}


def test_rules_link_their_documentation(project):
    _, log = _sarif(project)
    rules_md = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["informationUri"].startswith("https://")
    for rule in driver["rules"]:
        uri = rule["helpUri"]
        assert uri.startswith("https://") and "/docs/rules.md#" in uri
        anchor = uri.split("#", 1)[1]
        assert f"## {rule['id']} {rule['name']}" in rules_md
        assert anchor == f"{rule['id'].lower()}-{rule['name']}"


def test_fixes_carry_the_edits_that_make_the_rewrite(project, tmp_path_factory):
    _, log = _sarif(project)
    original = (project / "train.py").read_text()
    replacements = []
    for result in log["runs"][0]["results"]:
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        if uri != "train.py":
            continue
        assert ("fixes" in result) == (result["properties"]["state"] == "would-rewrite")
        for fix in result.get("fixes", []):
            for change in fix["artifactChanges"]:
                replacements += change["replacements"]
    lines = original.splitlines(keepends=True)
    unique = {
        (
            r["deletedRegion"]["startLine"],
            r["deletedRegion"]["endLine"],
            r["insertedContent"]["text"],
        )
        for r in replacements
    }
    for start, end, text in sorted(unique, reverse=True):
        lines[start - 1 : end - 1] = [text]
    run_cli(["fix", "train.py"], cwd=project)
    assert "".join(lines) == (project / "train.py").read_text()


def test_notebook_sites_point_at_their_line_of_the_file(project):
    _, log = _sarif(project)
    text = (project / "nb.ipynb").read_text().splitlines()
    notebook = [
        r
        for r in log["runs"][0]["results"]
        if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        == "nb.ipynb"
    ]
    assert notebook
    cells = json.loads((project / "nb.ipynb").read_text())["cells"]
    for result in notebook:
        region = result["locations"][0]["physicalLocation"]["region"]
        props = result["properties"]
        cell_line = "".join(cells[props["cell"] - 1]["source"]).splitlines()[
            props["cellLine"] - 1
        ]
        file_line = text[region["startLine"] - 1]
        assert region["startLine"] > 1
        assert json.dumps(cell_line)[1:-1].strip() in file_line
        site = cell_line[props["cellColumn"] - 1 :]
        assert file_line[region["startColumn"] - 1 :].startswith(json.dumps(site)[1:8])


def test_a_rewritten_site_is_a_pass(project):
    proc = run_cli(
        ["fix", "--show-fixes", "--output-format", "sarif", "train.py"], cwd=project
    )
    log = json.loads(proc.stdout)
    _valid(log)
    results = log["runs"][0]["results"]
    passed = [r for r in results if r["kind"] == "pass"]
    assert passed and all(r["level"] == "none" and "fixes" not in r for r in passed)


def test_the_readme_workflow_uploads_the_sarif_it_writes(project):
    """The GitHub Actions workflow of the README: its torchport step writes a valid
    SARIF log with every failing site, and the upload step names that file."""
    import re
    import shlex

    yaml = pytest.importorskip("yaml")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [workflow] = [
        yaml.safe_load(body)
        for body in re.findall(r"^```yaml\n(.*?)^```", readme, re.M | re.S)
        if "jobs:" in body
    ]
    assert workflow["permissions"]["security-events"] == "write"
    [steps] = [job["steps"] for job in workflow["jobs"].values()]
    [command] = [s["run"] for s in steps if s.get("run", "").startswith("torchport ")]
    [upload] = [s for s in steps if "upload-sarif" in s.get("uses", "")]
    assert upload["if"] == "always()"  # the check fails the job: upload anyway
    args = shlex.split(command)[1:]
    proc = run_cli(args, cwd=project)
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    log = json.loads((project / upload["with"]["sarif_file"]).read_text())
    _valid(log)
    assert any(r["level"] == "warning" for r in log["runs"][0]["results"])
