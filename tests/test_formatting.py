"""Black runs on the lines torchport changed, with the project's settings, and nowhere else."""

from __future__ import annotations

import difflib
import subprocess
import sys
import textwrap

import black
import pytest

from codemod.run.job import WRITE, Job
from codemod.run.process import process_source
from codemod.rewrite.formatting import black_mode, line_map
from codemod.model.options import Options
from codemod.rewrite.pipeline import rewrite_source
from tests.cli_helpers import run_cli
from tests.fixture_cases import FIXTURES, after_of

CASES = sorted((FIXTURES / "formatting").glob("*.before.py"))


@pytest.mark.parametrize("before", CASES, ids=lambda p: p.name)
def test_lines_without_a_site_stay_byte_identical(before):
    source = before.read_text(encoding="utf-8")
    result = rewrite_source(
        source, Options(), format_mode=black.Mode(), positions="input"
    )
    assert result.code == after_of(before).read_text(encoding="utf-8")
    site_lines = {d.line for d in result.diagnostics}
    old, new = source.splitlines(), result.code.splitlines()
    kept = set()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag == "equal":
            kept.update(range(i1 + 1, i2 + 1))
    untouched = set(range(1, len(old) + 1)) - site_lines
    assert (
        untouched <= kept
    ), f"lines changed without a site: {sorted(untouched - kept)}"
    # the fixture does rewrite something, on each line of a fix it applies
    applied = {d.line for d in result.diagnostics if d.applied}
    assert applied and not applied & kept


LONG = (
    "import torch\n\n"
    "batch = torch.tensor([[0.5, 1.5, 2.5, 3.5], [4.5, 5.5, 6.5, 7.5]], "
    "dtype=torch.float32).cuda()\n"
    "names = [ 'a','b' ]\n"
)


def _project(tmp_path, black_table: str):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.black]\n" + textwrap.dedent(black_table)
    )
    (tmp_path / "train.py").write_text(LONG)
    return tmp_path


def test_project_line_length_is_honoured(tmp_path):
    root = _project(tmp_path, "line-length = 120\n")
    proc = run_cli(["train.py"], cwd=root)
    assert proc.returncode == 0, proc.stderr
    text = (root / "train.py").read_text()
    # 102 columns: one line at 120, split at black's default 88.
    assert (
        "batch = torch.tensor([[0.5, 1.5, 2.5, 3.5], [4.5, 5.5, 6.5, 7.5]], "
        "dtype=torch.float32).to(_DEVICE())\n" in text
    )
    assert "names = [ 'a','b' ]\n" in text


def test_default_line_length_splits_the_rewritten_line(tmp_path):
    (tmp_path / "train.py").write_text(LONG)
    assert run_cli(["train.py"], cwd=tmp_path).returncode == 0
    assert "batch = torch.tensor(\n" in (tmp_path / "train.py").read_text()


def test_skip_string_normalization_is_honoured(tmp_path):
    source = (
        "import torch\nx = torch.zeros(2, device = 'cuda', dtype = torch.float32)\n"
    )
    (tmp_path / "pyproject.toml").write_text(
        "[tool.black]\nskip-string-normalization = true\n"
    )
    (tmp_path / "a.py").write_text(
        source.replace("'cuda'", "'cpu'") + "y = torch.ones(2).cuda()\n"
    )
    assert run_cli(["a.py"], cwd=tmp_path).returncode == 0
    text = (tmp_path / "a.py").read_text()
    assert "x = torch.zeros(2, device = 'cpu', dtype = torch.float32)\n" in text
    assert "y = torch.ones(2).to(_DEVICE())\n" in text
    mode = black_mode(tmp_path / "a.py")
    assert mode.string_normalization is False and mode.line_length == 88


def test_no_format_leaves_the_rewrite_as_libcst_wrote_it(tmp_path):
    (tmp_path / "train.py").write_text(LONG)
    assert run_cli(["--no-format", "train.py"], cwd=tmp_path).returncode == 0
    text = (tmp_path / "train.py").read_text()
    assert "dtype=torch.float32).to(_DEVICE())\n" in text
    assert "def _DEVICE():\n" in text  # the binding is written in its one shape


def test_crlf_file_keeps_its_line_endings_when_formatted():
    data = LONG.replace("\n", "\r\n").encode()
    result = process_source("x.py", data, Job(WRITE, Options()))
    assert result.changed
    assert result.output.count(b"\r\n") == result.output.count(b"\n")
    assert b"names = [ 'a','b' ]\r\n" in result.output


def test_line_map_follows_a_line_that_black_split():
    old = "import torch\nx = f(1).cuda()\ny = 2\n"
    new = "import torch\n\nDEVICE = (\n    accel\n)\n\nx = f(1).to(_DEVICE())\ny = 2\n"
    mapping = line_map(old, new)
    assert mapping[1:4] == [1, 7, 8]


def test_a_long_comment_is_not_a_reason_to_split_a_rewritten_line():
    import black

    from codemod.model.options import Options
    from codemod.rewrite.pipeline import rewrite_source

    comment = (
        "# examples: 'cpu', 'cuda', 'cuda:0', 'cuda:1' etc., or try 'mps' on macbooks"
    )
    source = (
        f"import torch\n\ndevice = 'cuda' {comment}\nx = torch.ones(1).to(device)\n"
    )
    out = rewrite_source(source, Options(), format_mode=black.Mode()).code
    assert f"device = _DEVICE().type {comment}\n" in out


def test_line_map_of_a_long_rewritten_line_needs_memory_linear_in_its_size():
    """Generated code: one statement of 20 kB holding a site, black-split into
    several lines. Mapping it must not compare the long lines character by
    character against each other (quadratic time, memory in megabytes)."""
    import tracemalloc

    items = ", ".join(str(i) for i in range(4000))
    old = f"import torch\nx = torch.tensor([{items}]).cuda()\ny = 2\n"
    new = f"import torch\n\nDEVICE = 1\n\nx = torch.tensor(\n    [{items}]\n).to(_DEVICE())\ny = 2\n"
    tracemalloc.start()
    try:
        mapping = line_map(old, new)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert mapping[1:4] == [1, 5, 8]
    assert peak < 8 * len(old), peak


# -- black imported only when it runs --------------------------------------------------
def test_the_default_line_length_is_blacks():
    from codemod.rewrite.formatting import DEFAULT_LINE_LENGTH, Layout

    assert DEFAULT_LINE_LENGTH == black.DEFAULT_LINE_LENGTH
    assert Layout().black_mode() == black.Mode()
    assert Layout(60).black_mode() == black.Mode(line_length=60)


@pytest.mark.parametrize(
    "files, line_length",
    [
        ({}, 88),
        ({"pyproject.toml": "[tool.black]\nline-length = 100\n"}, 100),
        # A pyproject without [tool.black] is not black's root: it looks higher up.
        (
            {
                "pyproject.toml": "[tool.black]\nline-length = 100\n",
                "sub/pyproject.toml": "[project]\nname = 'sub'\n",
            },
            100,
        ),
        (
            {
                "pyproject.toml": "[tool.black]\nline-length = 100\n",
                "sub/pyproject.toml": "[project]\ndependencies = ['black']\n",
            },
            100,
        ),
        # ...up to a repository's root, which is black's root whatever it holds.
        (
            {
                "pyproject.toml": "[tool.black]\nline-length = 100\n",
                "sub/.git/HEAD": "",
                "sub/pyproject.toml": "[project]\nname = 'sub'\n",
            },
            88,
        ),
        (
            {
                "pyproject.toml": "[tool.black]\nline-length = 100\n",
                "sub/.git/HEAD": "",
            },
            88,
        ),
        ({"sub/pyproject.toml": "[tool.black]\nline-length = 70\n"}, 70),
    ],
)
def test_the_layout_is_blacks_own_configuration(tmp_path, files, line_length):
    from codemod.rewrite.formatting import black_mode, layout_for

    (tmp_path / ".git").mkdir()  # the test's root, whatever lies above tmp_path
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "sub").mkdir(exist_ok=True)
    target = tmp_path / "sub" / "a.py"
    target.write_text("x = 1\n")
    layout = layout_for(target)
    assert layout.line_length == black_mode(target).line_length == line_length
    assert layout.black_mode() == black_mode(target)


def test_black_is_imported_only_when_it_runs(tmp_path):
    """A file torchport parses but leaves as it is costs no import of black."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from codemod.run.job import CHECK, Job\n"
        "from codemod.run.process import process_file\n"
        "from codemod.model.options import Options\n"
        "job = Job(CHECK, Options(), True)\n"
        "for name in sys.argv[1:]:\n"
        "    result = process_file(Path(name), job)\n"
        "    print(name, result.changed, 'black' in sys.modules)\n"
    )
    (tmp_path / "plain.py").write_text("import torch\nx = torch.ones(2)  # cuda\n")
    (tmp_path / "long.py").write_text(LONG)
    proc = subprocess.run(
        [sys.executable, "-c", script, "plain.py", "long.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "plain.py False False",
        "long.py True True",
    ]


def test_a_comment_for_its_line_goes_back_to_the_first_line_black_split():
    from codemod.rewrite.pragmas import on_first_lines

    before = "x = f(aaaa, bbbb)  # noqa: E501\ny = g(cccc)  # a note\n"
    split = "x = f(\n    aaaa, bbbb\n)  # noqa: E501\ny = g(\n    cccc\n)  # a note\n"
    assert on_first_lines(before, split) == (
        "x = f(  # noqa: E501\n    aaaa, bbbb\n)\ny = g(\n    cccc\n)  # a note\n"
    )
    # One that was not on the first line before (after a string's lines) stays.
    multiline = 'x = """a\nb""".join(c)  # type: ignore\n'
    split = 'x = """a\nb""".join(\n    c\n)  # type: ignore\n'
    assert on_first_lines(multiline, split) == split
    # A first line that ends inside a string cannot take it: left where it is.
    inside = 'x = f("""a\nb""")  # noqa\n'
    assert on_first_lines("x = f(y)  # noqa\n", inside) == inside


def test_a_statement_with_a_torchport_suppression_is_not_split():
    from codemod.rewrite.pragmas import unsplit

    text = "a = 1\nb = f(\n    x,  # noqa: TP102\n)\nc = 2\nd = 3  # noqa: E501\n"
    assert unsplit(text, [(1, 6)], [3]) == [(1, 1), (5, 6)]
    assert unsplit(text, [(2, 2)], [3]) == []
    assert unsplit(text, [(1, 6)], []) == [(1, 6)]  # no site suppressed there
