"""``# noqa`` on a site's line and ``# torchport: skip-file``."""

from __future__ import annotations

import black

from codemod.run.job import CHECK, Job
from codemod.run.prefilter import needs_parsing
from codemod.run.process import process_source
from codemod.model.options import Options
from codemod.model.noqa import noqa_lines
from codemod.rewrite.pipeline import rewrite_source
from tests.cli_helpers import run_cli


def rewrite(source: str):
    return rewrite_source(
        source, Options(), format_mode=black.Mode(), positions="input"
    )


def test_noqa_codes_and_bare_noqa():
    found = noqa_lines(
        "a = 1  # noqa: TP101, tp2\n"
        "b = 2  # NOQA\n"
        "c = 3  # noqa:TP201\n"
        "d = 4  # type: ignore  # noqa: E501\n"
    )
    assert found == {
        1: frozenset({"TP101", "TP2"}),
        2: None,
        3: frozenset({"TP201"}),
        4: frozenset({"E501"}),
    }


def test_noqa_inside_a_string_is_not_a_comment():
    source = 'x = "# noqa"\ny = """\n# noqa: TP1\n"""\nz = f"{x} # noqa"\n'
    assert noqa_lines(source) == {}


def test_noqa_suppresses_only_its_line_and_codes():
    source = (
        "import torch\n\n"
        "a = torch.ones(2).cuda()  # noqa: TP201\n"
        "b = torch.ones(2).cuda()  # noqa: E501\n"
        "c = torch.ones(2).cuda()  # noqa\n"
        "d = torch.ones(2).cuda()  # an ordinary comment\n"
        'e = "torch.ones(2).cuda()  # noqa"; f = torch.ones(2).cuda()\n'
    )
    result = rewrite(source)
    rewritten = {d.line for d in result.diagnostics if d.applied}
    assert rewritten == {4, 6, 7}
    assert "a = torch.ones(2).cuda()  # noqa: TP201" in result.code
    assert "c = torch.ones(2).cuda()  # noqa" in result.code


def test_noqa_on_the_first_line_of_a_multi_line_site():
    source = (
        "import torch\n\n"
        "x = (\n"
        "    torch.ones(  # noqa: TP201\n"
        "        2\n"
        "    ).cuda()\n"
        ")\n"
        "y = (\n"
        "    torch.ones(\n"
        "        2\n"
        "    ).cuda()  # noqa: TP201\n"
        ")\n"
    )
    result = rewrite(source)
    # A site is reported on the first line of its node: that is where noqa goes.
    assert [(d.line, d.applied) for d in result.diagnostics] == [(9, True)]
    assert (
        "x = (\n    torch.ones(  # noqa: TP201\n        2\n    ).cuda()\n)\n"
        in result.code
    )
    assert "torch.ones(2).to(_DEVICE())  # noqa: TP201" in result.code


def test_noqa_on_the_reported_line_of_a_multi_line_site():
    source = (
        "import torch\n\n"
        "x = torch.zeros(\n"
        '    2, device="cuda"  # noqa: TP102\n'
        ")\n"
    )
    assert rewrite(source).code == source


def test_skip_file_is_decided_from_the_bytes():
    data = b"# torchport: skip-file\nimport torch\nx = torch.ones(2).cuda()\n"
    assert not needs_parsing(data)
    assert needs_parsing(b'x = "# torchport: skip-file"\ny = torch.ones(2).cuda()\n')
    result = process_source("x.py", data, Job(CHECK, Options()))
    assert not result.changed and result.diagnostics == []


def test_skip_file_on_the_command_line(tmp_path):
    skipped = "import torch\n\n#   torchport:  skip-file\nx = torch.ones(2).cuda()\n"
    (tmp_path / "a.py").write_text(skipped)
    proc = run_cli(["--check", "."], cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""
