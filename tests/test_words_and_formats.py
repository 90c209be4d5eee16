"""Words and formats that say what happened (issue 23, item 9): no template in
the rule documentation; Markdown rendered in the HTML report; notebook changes as
Python per cell."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from tests.cli_helpers import ROOT, run_cli

CUDA = "import torch\n\nx = torch.ones(2).cuda()\nprint(x.sum().item())\n"


BASH_NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": None,
            "outputs": [],
            "source": ["%%bash\n", "python train.py --device cuda\n"],
        }
    ],
    "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


@pytest.mark.parametrize(
    "where",
    ["rules", "readme", "docs", "sarif", "report.md", "report.html"],
)
def test_no_message_template_shows(tmp_path, where):
    (tmp_path / "nb.ipynb").write_text(json.dumps(BASH_NOTEBOOK, indent=1))
    if where == "rules":
        text = run_cli(["rule", "--all"], cwd=tmp_path).stdout
        text += run_cli(["rule", "TP990"], cwd=tmp_path).stdout
    elif where == "readme":
        text = (ROOT / "README.md").read_text(encoding="utf-8")
    elif where == "docs":
        text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    elif where == "sarif":
        sarif = run_cli(
            ["check", "--output-format", "sarif", "nb.ipynb"], cwd=tmp_path
        ).stdout
        text = json.dumps(json.loads(sarif)["runs"][0]["tool"])
        assert "TP990" in text
    else:
        run_cli(["report", ".", "-o", where], cwd=tmp_path)
        text = (tmp_path / where).read_text()
        assert "TP990" in text
    assert "{magic}" not in text and "%%magic" in text


def test_the_html_report_renders_markdown(tmp_path):
    (tmp_path / "a.py").write_text(
        'import torch\n\nD = ["cuda"]\nx = torch.ones(2).cuda()\n'
    )
    run_cli(["report", ".", "-o", "r.html"], cwd=tmp_path)
    html = (tmp_path / "r.html").read_text()
    assert "derive it from the device binding (<code>DEVICE.type</code>)" in html
    assert "<pre><code>" in html and "<h4>" in html  # the rule documentation
    body = re.sub(r"<(pre|code)>.*?</\1>", "", html.split("<body>", 1)[1], flags=re.S)
    assert "`" not in body


@pytest.mark.parametrize("how", ["preview", "rewrite"])
def test_notebook_changes_are_python_per_cell_in_the_report(tmp_path, how):
    shutil.copy(
        ROOT / "fixtures" / "notebooks" / "training.before.ipynb", tmp_path / "nb.ipynb"
    )
    if how == "preview":
        run_cli(["report", ".", "-o", "r.html"], cwd=tmp_path)
    else:
        run_cli(["fix", "--report", "r.html", "nb.ipynb"], cwd=tmp_path)
    html = (tmp_path / "r.html").read_text().replace("&#34;", '"')
    assert "--- a/nb.ipynb:cell 3" in html and "+++ b/nb.ipynb:cell 3" in html
    assert "+model = nn.Linear(4, 2).to(DEVICE)" in html
    assert '\\n",' not in html  # no escaped JSON
