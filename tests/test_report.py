"""The migration report: Markdown checked with a Markdown parser, HTML opened in a
real headless browser (no console errors, a screenshot that is not blank)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli_helpers import ROOT, run_cli

TRAIN = (
    "import torch\n\n"
    "model = torch.nn.Linear(2, 2).cuda()\n"
    "torch.cuda.synchronize()\n"
    'DEVICES = ["cuda", "cpu"]\n'
    "torch.backends.cudnn.benchmark = True\n"
    "kept = torch.ones(2).cuda()  # noqa: TP201\n"
    "print(model, DEVICES, kept)\n"
)
TOOL = "import torch\n\nx = torch.ones(2).cuda()\nprint(x)\n"


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / "tools").mkdir(parents=True)
    (root / "train.py").write_text(TRAIN)
    (root / "tools" / "<odd> & name.py").write_text(TOOL)
    (root / "clean.py").write_text("print('no accelerator')\n")
    shutil.copy(
        ROOT / "fixtures" / "notebooks" / "training.before.ipynb", root / "nb.ipynb"
    )
    return root


def _snapshot(root: Path) -> dict:
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _expected(root: Path) -> dict:
    """What `check --output-format json` says, the report's figures must match."""
    records = json.loads(
        run_cli(["check", "--output-format", "json", "."], cwd=root).stdout
    )
    states = {"would-rewrite": 0, "reported": 0, "informational": 0}
    for r in records:
        if r["state"] == "reported" and r["severity"] == "info":
            states["informational"] += 1
        else:
            states[r["state"]] += 1
    return states


# -- Markdown -------------------------------------------------------------------------
def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_markdown_report_parses_and_holds_the_figures(project):
    from markdown_it import MarkdownIt

    before = _snapshot(project)
    proc = run_cli(["report", ".", "-o", "../migration.md"], cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert _snapshot(project) == before  # a report writes no code
    text = (project.parent / "migration.md").read_text()

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    headings = [
        tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"
    ]
    assert headings[0] == "torchport migration report"
    for section in (
        "Sites by family",
        "What would be rewritten",
        "What needs a human",
        "Where the remaining work is",
        "Running the result on each backend",
    ):
        assert section in headings
    assert sum(t.type == "table_open" for t in tokens) == 3
    # Every link to a rule's documentation lands on a heading of the report.
    anchors = {_slug(h) for h in headings}
    links = [
        child.attrs["href"]
        for t in tokens
        if t.type == "inline"
        for child in t.children or []
        if child.type == "link_open"
    ]
    assert links and all(link[1:] in anchors for link in links), links

    # The totals row matches what `check` reports, and the noqa is counted.
    expected = _expected(project)
    total = next(line for line in text.splitlines() if line.startswith("| **All**"))
    figures = [int(n) for n in re.findall(r"\*\*(\d+)\*\*", total)]
    assert figures == [
        expected["would-rewrite"],
        expected["reported"],
        expected["informational"],
        1,  # the `# noqa: TP201`
    ]
    assert "### TP109 cuda-string-unknown-context: 1 site" in text
    assert "`train.py:5:12`" in text


def test_report_option_on_a_rewrite_shows_what_was_rewritten(project):
    expected = _expected(project)
    proc = run_cli(["fix", "--report", "../done.md", "."], cwd=project)
    assert proc.returncode == 1  # TP109 is left
    text = (project.parent / "done.md").read_text()
    assert "## What was rewritten" in text
    total = next(line for line in text.splitlines() if line.startswith("| **All**"))
    assert re.findall(r"\*\*(\d+)\*\*", total)[0] == str(expected["would-rewrite"])
    # Positions are in the rewritten file (the binding added lines above).
    lines = (project / "train.py").read_text().splitlines()
    line = lines.index('DEVICES = ["cuda", "cpu"]') + 1
    assert line > 5 and f"`train.py:{line}:12`" in text


def test_html_report_from_a_rewrite_has_each_diff(project):
    run_cli(["fix", "--report", "../done.html", "."], cwd=project)
    page = (project.parent / "done.html").read_text()
    assert "+model = torch.nn.Linear(2, 2).to(_DEVICE())" in page
    assert "-model = torch.nn.Linear(2, 2).cuda()" in page


# -- HTML ------------------------------------------------------------------------------
def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(
        "needs a headless Chromium (Debian: apt-get install -y chromium;"
        " .ci/run installs it)"
    )


def _open_in_browser(page: Path, tmp_path: Path):
    """Render ``page`` headless: (console messages, screenshot path)."""
    shot = tmp_path / f"{page.stem}.png"
    proc = subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,1600",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert shot.is_file(), proc.stderr[-3000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return console, shot


def _ink(shot: Path) -> float:
    """The share of the screenshot's pixels that are not background white."""
    from PIL import Image

    image = Image.open(shot).convert("L")
    histogram = image.histogram()
    return 1 - histogram[255] / sum(histogram)


def test_html_report_renders_in_a_browser_without_console_errors(project, tmp_path):
    proc = run_cli(["report", ".", "-o", "../migration.html"], cwd=project)
    assert proc.returncode == 0, proc.stderr
    page = project.parent / "migration.html"
    html = page.read_text()
    # Self-contained: nothing to fetch, no script.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert "<script" not in html and "<link" not in html
    # Names are escaped, never markup.
    assert "&lt;odd&gt; &amp; name.py" in html and "<odd>" not in html
    assert len(html) < 200_000
    console, shot = _open_in_browser(page, tmp_path)
    assert console == []
    assert _ink(shot) > 0.02  # text, tables and the chart, not a blank page


def test_the_browser_check_sees_console_errors_and_blank_pages(tmp_path):
    """The check above can fail: a script error is seen, a blank page is blank."""
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><script>undefined_function()</script></body></html>")
    console, shot = _open_in_browser(broken, tmp_path)
    assert any("undefined_function is not defined" in line for line in console)
    assert _ink(shot) < 0.001


def test_report_needs_md_or_html(project):
    proc = run_cli(["report", ".", "-o", "../r.txt"], cwd=project)
    assert proc.returncode == 2 and "-o must end in .md or .html" in proc.stderr
