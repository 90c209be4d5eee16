"""The migration workflow around ``# noqa``: ``--add-noqa``
baselines what is left so CI turns green, ``--unused-noqa`` finds the comments
that suppress nothing, and the report counts real comments only."""

from __future__ import annotations

import json
import shutil

from tests.cli_helpers import ROOT, run_cli

SOURCE = """import torch

x = torch.ones(2).cuda()
DEVICES = ["cuda", "cpu"]  # noqa: E501
torch.backends.cudnn.benchmark = True
y = torch.ones(
    2
).cuda()
print(x, y, DEVICES)
"""


def test_add_noqa_baselines_every_site_that_fails(tmp_path):
    (tmp_path / "a.py").write_text(SOURCE)
    assert run_cli(["check", "a.py"], cwd=tmp_path).returncode == 1
    proc = run_cli(["check", "--add-noqa", "a.py"], cwd=tmp_path)
    assert "Added 3 noqa directives." in proc.stderr, proc.stderr
    text = (tmp_path / "a.py").read_text()
    assert "x = torch.ones(2).cuda()  # noqa: TP201\n" in text
    assert 'DEVICES = ["cuda", "cpu"]  # noqa: E501, TP109\n' in text
    assert "torch.backends.cudnn.benchmark = True\n" in text  # informational: kept
    assert "y = torch.ones(  # noqa: TP201\n" in text
    proc = run_cli(["check", "a.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    again = run_cli(["check", "--add-noqa", "a.py"], cwd=tmp_path)
    assert "Added 0 noqa directives." in again.stderr
    assert (tmp_path / "a.py").read_text() == text


def test_add_noqa_says_where_no_comment_can_go(tmp_path):
    (tmp_path / "a.py").write_text('import torch\n\nx = f("""\n""").cuda()\nprint(x)\n')
    proc = run_cli(["check", "--add-noqa", "a.py"], cwd=tmp_path)
    assert proc.returncode == 1
    assert "a.py:3: no comment can go on this line" in proc.stderr
    assert "noqa" not in (tmp_path / "a.py").read_text()


def test_add_noqa_in_a_notebook(tmp_path):
    shutil.copy(
        ROOT / "fixtures" / "notebooks" / "training.before.ipynb", tmp_path / "nb.ipynb"
    )
    proc = run_cli(["check", "--add-noqa", "nb.ipynb"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert run_cli(["check", "nb.ipynb"], cwd=tmp_path).returncode == 0
    notebook = json.loads((tmp_path / "nb.ipynb").read_text())
    sources = ["".join(c["source"]) for c in notebook["cells"]]
    assert any("# noqa: TP" in s for s in sources)


UNUSED = """import torch

a = torch.ones(2).cuda()  # noqa: TP201
b = torch.ones(2)  # noqa: TP201
c = torch.ones(2)  # noqa
d = torch.ones(2)  # noqa: E501
e = torch.ones(2)  # noqa: TP999
f = torch.ones(2).cuda()  # noqa: TP201, TP304
print(a, b, c, d, e, f, "# noqa: TP201")
"""


def test_unused_noqa_reports_the_codes_that_suppress_nothing(tmp_path):
    (tmp_path / "a.py").write_text(UNUSED)
    proc = run_cli(["check", "--unused-noqa", "a.py"], cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines == [
        "a.py:4:20: TP000 unused `noqa` directive (unused: TP201)",
        "a.py:7:20: TP000 unused `noqa` directive (unknown: TP999)",
        "a.py:8:27: TP000 unused `noqa` directive (unused: TP304)",
    ]
    assert run_cli(["check", "a.py"], cwd=tmp_path).returncode == 0


def test_unused_noqa_names_a_code_that_is_not_enabled(tmp_path):
    (tmp_path / "a.py").write_text(
        "import torch\n\na = torch.ones(2).cuda()  # noqa: TP201\n"
    )
    proc = run_cli(["check", "--unused-noqa", "--ignore", "TP2", "a.py"], cwd=tmp_path)
    assert proc.stdout.splitlines() == [
        "a.py:3:27: TP000 unused `noqa` directive (non-enabled: TP201)"
    ]


def test_the_report_counts_the_sites_real_noqa_comments_keep(tmp_path):
    (tmp_path / "a.py").write_text(UNUSED)
    run_cli(["report", ".", "-o", "r.md"], cwd=tmp_path)
    text = (tmp_path / "r.md").read_text()
    # Four real `# noqa: TP...` comments name five codes, and keep two sites (a
    # and f); the others suppress nothing, and the string is no comment.
    row = next(line for line in text.splitlines() if line.startswith("| **All**"))
    assert row.endswith("| **2** |"), row


def test_tp000_is_documented():
    for word in ("TP000", "unused-noqa"):
        out = run_cli(["rule", word]).stdout
        assert out.startswith("# TP000 unused-noqa\n") and "--unused-noqa" in out
