"""Words and formats that say what happened: statistics that
do not claim a rewrite that was not made, in JSON too; no template in the rule
documentation; Markdown rendered in the HTML report; notebook changes as Python
per cell; the full format with the code and a caret."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from tests.cli_helpers import ROOT, run_cli

CUDA = "import torch\n\nx = torch.ones(2).cuda()\nprint(x.sum().item())\n"


def test_check_statistics_do_not_say_rewritten(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    out = run_cli(["check", "--statistics", "a.py"], cwd=tmp_path).stdout
    assert "rewritten" not in out and "1 site to rewrite" in out
    assert (tmp_path / "a.py").read_text() == CUDA
    out = run_cli(["fix", "--statistics", "a.py"], cwd=tmp_path).stdout
    assert "1 site rewritten" in out


def test_statistics_follow_the_output_format(tmp_path):
    (tmp_path / "a.py").write_text(CUDA + 'D = ["cuda"]\n')
    proc = run_cli(
        ["check", "--statistics", "--output-format", "json", "a.py"], cwd=tmp_path
    )
    records = json.loads(proc.stdout)
    assert records == [
        {
            "code": "TP109",
            "name": "cuda-string-unknown-context",
            "severity": "error",
            "count": 1,
            "fixable": False,
            "fix_applies": 0,
            "rewritten": 0,
            "left": 1,
        },
        {
            "code": "TP201",
            "name": "cuda-method",
            "severity": "error",
            "count": 1,
            "fixable": True,
            "fix_applies": 1,
            "rewritten": 0,
            "left": 0,
        },
    ]


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
    assert "derive it from the device binding (<code>_DEVICE().type</code>)" in html
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
    assert "+model = nn.Linear(4, 2).to(_DEVICE())" in html
    assert '\\n",' not in html  # no escaped JSON


def test_the_full_format_shows_the_code_and_a_caret(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    out = run_cli(["check", "--output-format", "full", "a.py"], cwd=tmp_path).stdout
    assert out.splitlines()[:8] == [
        "a.py:3:5: TP201 [*] `.cuda()` moves to CUDA only; use `.to(_DEVICE())`",
        "  |",
        "1 | import torch",
        "2 |",
        "3 | x = torch.ones(2).cuda()",
        "  |     ^^^^^^^^^^^^^^^^^^^^ TP201",
        "4 | print(x.sum().item())",
        "  |",
    ]
    assert "  = help: `torchport fix` rewrites it" in out


def test_the_full_format_of_stdin(tmp_path):
    proc = run_cli(
        ["check", "--output-format", "full", "-"], cwd=tmp_path, input=CUDA.encode()
    )
    assert "3 | x = torch.ones(2).cuda()" in proc.stdout
