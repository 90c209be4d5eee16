"""A release people can pin: one version in the package,
the changelog and every snippet that names it; a license file; a test install that
does not pull PyTorch's CUDA build; a quick subset of the suite."""

from __future__ import annotations

import re
import subprocess
import sys

import codemod
from tests.cli_helpers import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_version_the_changelog_and_the_snippets_agree():
    version = codemod.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    released = re.findall(r"^## (\d+\.\d+\.\d+)", changelog, re.MULTILINE)
    assert released[0] == version, "the newest CHANGELOG entry is the version"
    revs = set(re.findall(r"rev: (v[\w.]+)", README))
    assert revs == {f"v{version}"}, revs
    assert f"@v{version}" in README  # the CI snippet installs the release
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert f"rev: v{version}" in hooks


def test_the_license_is_the_one_setup_cfg_names():
    assert "license = MIT" in (ROOT / "setup.cfg").read_text()
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text


def test_the_rule_links_name_the_release():
    from codemod.output.docs import RULES_URL

    assert f"/v{codemod.__version__}/docs/rules.md" in RULES_URL


def test_every_link_names_the_one_repository():
    from codemod.output.docs import REPOSITORY_URL

    assert f"\nurl = {REPOSITORY_URL}\n" in (ROOT / "setup.cfg").read_text()
    repos = set(re.findall(r"repo: (\S+)", README)) - {"local"}
    assert repos == {REPOSITORY_URL}, repos
    assert f"git+{REPOSITORY_URL}@v" in README
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert f"repo: {REPOSITORY_URL}\n" in hooks


def test_the_test_install_takes_pytorchs_cpu_build():
    requirements = (ROOT / "requirements-test.txt").read_text()
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in requirements
    assert "-e .[test]" in requirements
    assert "pip install -r requirements-test.txt" in README
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert any(
        "pip install" in line and line.endswith("-r requirements-test.txt")
        for line in ci
    )


def test_the_quick_subset_leaves_out_the_slow_tests():
    setup = (ROOT / "setup.cfg").read_text()
    assert "\n    slow: " in setup
    quick = "-m pytest -q -p no:cacheprovider --collect-only -m".split() + ["not slow"]
    files = ["tests/test_simulator.py", "tests/test_cli_like_ruff.py"]
    proc = subprocess.run(
        [sys.executable, *quick, *files], cwd=ROOT, capture_output=True, text=True
    )
    assert "test_simulator.py" not in proc.stdout
    assert "test_cli_like_ruff.py" in proc.stdout
    assert 'python -m pytest -n 2 -m "not slow"' in README
