"""``# noqa`` as the report counts it (issue 23, item 9): real comments only; and
TP000, what the unused-noqa check reports, documented."""

from __future__ import annotations

from tests.cli_helpers import run_cli

UNUSED = """import torch

a = torch.ones(2).cuda()  # noqa: TP201
b = torch.ones(2)  # noqa: TP201
c = torch.ones(2)  # noqa
d = torch.ones(2)  # noqa: E501
e = torch.ones(2)  # noqa: TP999
f = torch.ones(2).cuda()  # noqa: TP201, TP304
print(a, b, c, d, e, f, "# noqa: TP201")
"""


def test_the_report_counts_real_noqa_comments_only(tmp_path):
    (tmp_path / "a.py").write_text(UNUSED)
    run_cli(["report", ".", "-o", "r.md"], cwd=tmp_path)
    text = (tmp_path / "r.md").read_text()
    # Four real `# noqa: TP...` comments name five codes; the string names none.
    assert "4 suppressed" not in text
    row = next(line for line in text.splitlines() if line.startswith("| **All**"))
    assert row.endswith("| **5** |"), row


def test_tp000_is_documented():
    for word in ("TP000", "unused-noqa"):
        out = run_cli(["rule", word]).stdout
        assert out.startswith("# TP000 unused-noqa\n") and "--unused-noqa" in out
