"""A release people can pin: one version in the package,
the changelog and every snippet that names it; a license file; a test install that
does not pull PyTorch's CUDA build; a quick subset of the suite."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import codemod
from tests.cli_helpers import GIT_ENV, ROOT

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
    # The heaviest tests that remained in it: a project's tests run on PyTorch
    # twice, and a file of 5 MB.
    files += ["tests/test_patched_elsewhere.py", "tests/test_robustness.py"]
    proc = subprocess.run(
        [sys.executable, *quick, *files], cwd=ROOT, capture_output=True, text=True
    )
    assert "test_simulator.py" not in proc.stdout
    assert "test_cli_like_ruff.py" in proc.stdout
    assert "test_the_patched_module_keeps_its_calls_and_the_test" not in proc.stdout
    assert "test_big_file_is_rewritten" not in proc.stdout
    assert 'python -m pytest -n 2 -m "not slow"' in README
    assert "under 2 minutes" not in README  # it never held: the figure is stated


def _release_script():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import release
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return release


def _git(root, *args) -> subprocess.CompletedProcess:
    env = dict(os.environ, **GIT_ENV)
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=env
    )


def test_every_version_the_readme_names_is_a_release_tag():
    """pre-commit's `rev:`, pip's `@vX.Y.Z` and SARIF's `helpUri` name a tag: each
    must be a tag of this clone on a commit that carries that version. The one
    exception is the release being made: its version on the newest commit, not
    yet tagged, by the step the README documents (the tag is made once merged)."""
    from codemod.output.docs import RULES_URL

    if _git(ROOT, "rev-parse", "--is-shallow-repository").stdout.strip() != "false":
        pytest.skip("not a full git clone (a shallow one holds no tags)")
    release = _release_script()
    versions = release.named_versions(README) + release.named_versions(RULES_URL)
    assert versions and set(versions) <= {codemod.__version__}, versions
    head = _git(ROOT, "rev-parse", "HEAD").stdout.strip()
    # A clone made of the branch alone holds no tag at all: there the release must
    # be taggable, its version set by a commit of this history (the one
    # `release.py --tag` tags); where the clone holds tags, the tag must be there.
    tags = _git(ROOT, "tag", "--list", "v*").stdout.split()
    for version in set(versions):
        tagged = release.tagged_commit(ROOT, version)
        if tagged is not None:
            at_tag = _git(ROOT, "show", f"{tagged}:codemod/__init__.py").stdout
            assert release.version_of(at_tag) == version
            continue
        assert "python scripts/release.py --tag" in README
        released = release.release_commit(ROOT, version)
        assert released is not None, f"no commit of this history sets {version}"
        assert not tags or released == head, (
            f"v{version} is named by the README but is no tag of this clone:"
            " run `python scripts/release.py --tag` and push the tag"
        )


def _release_tree(root, version: str, readme_version: str) -> None:
    files = {
        "codemod/__init__.py": f'__version__ = "{version}"\n',
        "CHANGELOG.md": f"# Changelog\n\n## Unreleased\n\n## {version} (2026-12-01)\n",
        "README.md": f"    rev: v{readme_version}\npip install x@v{readme_version}\n",
        ".pre-commit-hooks.yaml": f"#     rev: v{version}\n",
        "codemod/output/docs.py": 'RULES_URL = f"x/blob/v{__version__}/docs"\n',
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_the_release_script_tags_the_commit_that_set_the_version(tmp_path):
    script = [sys.executable, str(ROOT / "scripts" / "release.py"), "--root"]
    env = dict(os.environ, **GIT_ENV)

    def release(*args):
        return subprocess.run(
            [*script, str(tmp_path), *args], capture_output=True, text=True, env=env
        )

    _git(tmp_path, "init", "-q")
    _release_tree(tmp_path, "0.3.0", "0.3.0")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "Release 0.3.0")
    released = _git(tmp_path, "rev-parse", "HEAD").stdout.strip()
    (tmp_path / "later.py").write_text("x = 1\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "Later work")
    checked = release()
    assert checked.returncode == 0 and "no tag v0.3.0" in checked.stdout
    tagged = release("--tag")
    assert tagged.returncode == 0, tagged.stderr
    assert "git push origin v0.3.0" in tagged.stdout
    assert _git(tmp_path, "rev-parse", "v0.3.0^{commit}").stdout.strip() == released
    assert release("--tag").returncode == 0  # already there: nothing moves
    moved = release("--tag", "--commit", "HEAD")
    assert moved.returncode == 1 and "never moved" in moved.stderr
    _release_tree(tmp_path, "0.3.0", "0.2.9")
    stale = release()
    assert stale.returncode == 1
    assert "README.md: names v0.2.9, not v0.3.0" in stale.stderr


def test_the_ci_install_does_not_retry_an_unreachable_index():
    """pip retries each request five times with back-off: with an index that
    cannot be reached, for every request of every package. The CI script fails
    each request at once and asks PyTorch's index once."""
    ci = (ROOT / ".ci" / "run").read_text()
    first_pip = ci.index("pip install")
    assert re.search(r"^export .*\bPIP_RETRIES=0\b", ci[:first_pip], re.MULTILINE)
    assert re.search(r"^export .*\bPIP_TIMEOUT=\d+\b", ci[:first_pip], re.MULTILINE)
    assert "urllib.request.urlopen" in ci  # the one probe of PyTorch's index
    grep = "grep -v -e '--extra-index-url' requirements-test.txt"
    assert grep in ci  # left out when it cannot be reached
