"""Bad input: every file is reported on one line, left byte for byte as it was, and
the other files are still processed; the run exits 2.

One command-line run over a tree holding every case; each test checks one case.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from codemod.run import pool, process
from codemod.run.files import discover
from codemod.run.job import CHECK, WRITE, Job
from codemod.model.options import Options
from tests.cli_helpers import run_cli

CUDA = "import torch\n\nx = torch.ones(2).cuda()\n"


def notebook_bytes(metadata, source) -> bytes:
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "source": source}
    data = {"cells": [cell], "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(data).encode()


BINDING = "def _DEVICE():"

CASES = {
    "syntax.py": b"import torch\nx = torch.ones(2).cuda(\n",
    "py2.py": b'import torch\nprint "on", torch.ones(2).cuda()\n',
    "latin1_no_cookie.py": b"import torch\n# caf\xe9\nx = torch.ones(2).cuda()\n",
    "latin1_cookie.py": (
        b"# -*- coding: latin-1 -*-\nimport torch\n"
        b's = "caf\xe9"  # caf\xe9\nx = torch.ones(2).cuda()\n'
    ),
    "bad_cookie.py": b"# -*- coding: no-such-codec -*-\nx = 'cuda'\n",
    "bom.py": b"\xef\xbb\xbfimport torch\n\nx = torch.ones(2).cuda()\n",
    "crlf.py": b"import torch\r\n\r\ny  =  [1,2]\r\nx = torch.ones(2).cuda()\r\nz=3\r\n",
    "mixed.py": b"import torch\n\ny  =  [1,2]\r\nx = torch.ones(2).cuda()\nz=3\r\n",
    "tabs.py": b"import torch\nif True:\n\ta  = 1\n\tx = torch.ones(2).cuda()\n\tb  = 2\n",
    # black re-indents line 3 with spaces; libcst cannot read that output back
    "tabs_blank.py": b"import torch\nclass C:\n\ty = f(x).cuda()\n\n\t\t  \t \t\n",
    "formfeed.py": b"import torch\n\x0c\ny  = 1\nx = torch.ones(2).cuda()\n",
    "formfeed_lost.py": (
        b"import torch\nif True:\n    a = 1\n\x0cdef f():\n    return torch.ones(2).cuda()\n"
    ),
    "empty.py": b"",
    "comments.py": b"# move everything to cuda\n# torch.ones(2).cuda()\n",
    "binary.py": bytes(range(256)) * 4 + b"cuda",
    "sp ace \u00e9t\u00e9.py".encode(): CUDA.encode(),
    "utf16.py": CUDA.encode("utf-16"),
    # the longest name a file system takes: the temporary file must still fit
    "n" * 252 + ".py": CUDA.encode(),
    # a string kernelspec reads as "language not said": the notebook is Python
    "kernelspec.ipynb": notebook_bytes({"kernelspec": "python3"}, CUDA),
    "number_source.ipynb": notebook_bytes({}, ["x = x.cuda()\n", 3]),
    "deep.ipynb": b'{"cells": [' + b"[" * 100_000 + b'"cuda"' + b"]" * 100_000 + b"]}",
}
# Codecs that are not text encodings (bytes to bytes, or str to str).
CODECS = ["rot13", "hex", "base64", "zlib", "bz2", "uu", "quopri"]
for codec in CODECS:
    CASES[f"codec_{codec}.py"] = f"# coding: {codec}\n{CUDA}".encode()
UNTOUCHED = [
    "utf16.py",
    "number_source.ipynb",
    "deep.ipynb",
    *(f"codec_{codec}.py" for codec in CODECS),
    "syntax.py",
    "py2.py",
    "latin1_no_cookie.py",
    "bad_cookie.py",
    "empty.py",
    "comments.py",
    "binary.py",
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """The tree, the run over it, and the outside file a symbolic link points to."""
    base = tmp_path_factory.mktemp("bad")
    root = base / "tree"
    root.mkdir()
    outside = base / "outside.py"
    outside.write_text(CUDA)
    for name, data in CASES.items():
        (root / os.fsdecode(name)).write_bytes(data)
    (root / "dir.py").mkdir()
    (root / "dir.py" / "inner.py").write_text(CUDA)
    (root / "broken.py").symlink_to(root / "nowhere.py")
    (root / "link.py").symlink_to(outside)
    readonly = root / "readonly.py"
    readonly.write_text(CUDA)
    readonly.chmod(0o444)
    # Named on the command line: links that lead out of the tree or nowhere, and
    # things that are not files.
    (root / "unreadable.py").symlink_to("/proc/self/clear_refs")
    (root / "escape.py").symlink_to(outside)
    (root / "loop.py").symlink_to(root / "loop.py")
    (root / "zero.py").symlink_to("/dev/zero")
    os.mkfifo(root / "fifo.py")
    # Ignore files that never end or block: not read.
    for name, make in [
        ("pipe_ignore", os.mkfifo),
        ("zero_ignore", lambda path: os.symlink("/dev/zero", path)),
    ]:
        (root / name).mkdir()
        make(root / name / ".gitignore")
        (root / name / "ok.py").write_text(CUDA)
    # A read-only folder, as root too.
    (root / "ro" / "sub").mkdir(parents=True)
    (root / "ro" / "sub" / "a.py").write_text(CUDA)
    (root / "ro" / "sub").chmod(0o555)
    args = [
        str(root),
        str(root / "crlf.py"),  # given twice (once inside the folder)
        *(str(root / name) for name in NAMED),
    ]
    proc = run_cli(args, cwd=root)
    return root, outside, proc


NAMED = [
    "broken.py",
    "unreadable.py",
    "missing.py",
    "escape.py",
    "loop.py",
    "zero.py",
    "fifo.py",
]


def _error_lines(proc):
    return [line for line in proc.stderr.splitlines() if not line.startswith("Rewrote")]


def _error_for(proc, path: Path) -> str:
    # ``path: reason``, or ``path:cell N: reason`` for one cell of a notebook
    found = [
        line
        for line in _error_lines(proc)
        if line.startswith((f"{path}: ", f"{path}:cell "))
    ]
    assert len(found) == 1, proc.stderr
    return found[0]


def test_exit_code_and_summary(tree):
    root, _, proc = tree
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    # every error is one line naming its file
    for line in _error_lines(proc):
        assert line.startswith(str(root)), line


@pytest.mark.parametrize("name", UNTOUCHED)
def test_left_untouched(tree, name):
    root, _, _ = tree
    assert (root / name).read_bytes() == CASES[name]


@pytest.mark.parametrize(
    "name, message",
    [
        ("syntax.py", "cannot parse: line 2: '(' was never closed"),
        ("py2.py", "cannot parse: line 2: Missing parentheses in call to 'print'."),
        ("py2.py", "(Python 2 code is not supported)"),
        ("latin1_no_cookie.py", "cannot decode: not valid UTF-8 (byte 0xe9 on line 2)"),
        ("bad_cookie.py", "cannot decode: unknown encoding"),
        ("binary.py", "cannot decode: binary file (contains NUL bytes)"),
        ("readonly.py", "read-only file; not written"),
        ("ro/sub/a.py", "read-only folder; not written"),
        ("broken.py", "broken symbolic link"),
        ("unreadable.py", "outside the paths given; not followed"),
        ("escape.py", "outside the paths given; not followed"),
        ("loop.py", "symbolic link loop"),
        ("zero.py", "not a regular file (symbolic link to a character device)"),
        ("fifo.py", "not a regular file (a named pipe)"),
        ("missing.py", "no such file or directory"),
        ("utf16.py", "cannot decode: UTF-16 text"),
        ("number_source.ipynb", "cell 1: source is not text; notebook left untouched"),
        ("deep.ipynb", "cannot parse: JSON nested too deep"),
        *(
            (f"codec_{codec}.py", f"cannot decode: '{codec}' is not a text encoding")
            for codec in CODECS
        ),
    ],
)
def test_reported_on_one_line(tree, name, message):
    root, _, proc = tree
    assert message in _error_for(proc, root / name)


def test_latin1_with_cookie_is_rewritten_in_latin1(tree):
    root, _, _ = tree
    data = (root / "latin1_cookie.py").read_bytes()
    assert data.startswith(b"# -*- coding: latin-1 -*-\n")
    assert b's = "caf\xe9"  # caf\xe9\n' in data  # still latin-1, not UTF-8
    text = data.decode("latin-1")
    assert "x = torch.ones(2).to(_DEVICE())" in text and BINDING in text


def test_bom_is_kept(tree):
    root, _, _ = tree
    data = (root / "bom.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbfimport functools\n\nimport torch\n")
    assert data.count(b"\xef\xbb\xbf") == 1 and b".to(_DEVICE())" in data


def test_crlf_kept_and_untouched_lines_not_normalized(tree):
    root, _, _ = tree
    data = (root / "crlf.py").read_bytes()
    assert b".to(_DEVICE())" in data
    assert data.count(b"\n") == data.count(b"\r\n")
    assert b"\r\ny  =  [1,2]\r\n" in data and b"\r\nz=3\r\n" in data


def test_mixed_line_endings_kept_line_by_line(tree):
    root, _, _ = tree
    data = (root / "mixed.py").read_bytes()
    assert b"\ny  =  [1,2]\r\nx = torch.ones(2).to(_DEVICE())\nz=3\r\n" in data


def test_tab_indented_block_keeps_its_untouched_lines(tree):
    # black, asked to format one line of a tab-indented block, re-indents the block
    root, _, _ = tree
    data = (root / "tabs.py").read_bytes()
    assert b"\n\ta  = 1\n\tx = torch.ones(2).to(_DEVICE())\n\tb  = 2\n" in data


def test_output_is_readable_by_the_next_run(tree):
    root, _, proc = tree
    assert b"\n\ty = f(x).to(_DEVICE())\n" in (root / "tabs_blank.py").read_bytes()
    second = run_cli(["--check", str(root / "tabs_blank.py")], cwd=root)
    assert second.returncode == 0, second.stderr


def test_form_feed_kept(tree):
    root, _, _ = tree
    data = (root / "formfeed.py").read_bytes()
    assert b"\n\x0c\ny  = 1\nx = torch.ones(2).to(_DEVICE())\n" in data


def test_form_feed_after_an_indented_block_is_kept(tree):
    # libcst drops such a form feed when it parses the whole file; torchport parses
    # only the statements it rewrites, and copies every other line.
    root, _, _ = tree
    data = (root / "formfeed_lost.py").read_bytes()
    assert b"    a = 1\n\x0cdef f():\n    return torch.ones(2).to(_DEVICE())\n" in data


def test_non_ascii_name_with_spaces_is_rewritten(tree):
    root, _, proc = tree
    path = root / "sp ace \u00e9t\u00e9.py"
    assert ".to(_DEVICE())" in path.read_text()
    assert not [line for line in _error_lines(proc) if "t\u00e9" in line]


def test_directory_named_py_is_walked(tree):
    root, _, _ = tree
    assert ".to(_DEVICE())" in (root / "dir.py" / "inner.py").read_text()


def test_symlink_out_of_the_tree_is_not_followed(tree):
    root, outside, proc = tree
    assert outside.read_text() == CUDA
    assert (root / "link.py").is_symlink()
    assert "link.py" not in proc.stderr


def test_read_only_file_is_not_written_nor_chmodded(tree):
    root, _, _ = tree
    readonly = root / "readonly.py"
    assert readonly.read_text() == CUDA
    assert stat.S_IMODE(readonly.stat().st_mode) == 0o444


def test_path_given_twice_is_processed_once(tree):
    _, _, proc = tree
    # the cases + dir.py/inner.py, readonly.py, ro/sub/a.py and the two ok.py beside
    # odd ignore files (links and pipes are not taken; crlf.py counted once)
    assert f"of {len(CASES) + 5} files" in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    "name",
    ["n" * 252 + ".py", "kernelspec.ipynb", "pipe_ignore/ok.py", "zero_ignore/ok.py"],
    ids=["long-name", "string-kernelspec", "pipe-gitignore", "dev-zero-gitignore"],
)
def test_rewritten_beside_bad_input(tree, name):
    root, _, proc = tree
    assert "to(_DEVICE())" in (root / name).read_text(), proc.stderr
    assert str(root / name) not in proc.stderr


def test_read_only_folder_is_not_written_even_by_root(tree):
    root, _, _ = tree
    assert (root / "ro" / "sub" / "a.py").read_text() == CUDA
    assert sorted(p.name for p in (root / "ro" / "sub").iterdir()) == ["a.py"]


def test_named_link_out_of_the_tree_is_not_followed(tree):
    root, outside, _ = tree
    assert outside.read_text() == CUDA and (root / "escape.py").is_symlink()


@pytest.mark.skipif(
    os.geteuid() == 0, reason="root reads files without read permission"
)
def test_file_without_read_permission(tmp_path):
    # As root this case is covered by unreadable.py (a read that fails for everyone).
    target = tmp_path / "secret.py"
    target.write_text(CUDA)
    target.chmod(0)
    proc = run_cli([str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{target}: cannot read: Permission denied" in proc.stderr


@pytest.mark.skipif(
    os.geteuid() == 0, reason="root lists folders without read permission"
)
def test_folder_without_read_permission(tmp_path):
    (tmp_path / "ok.py").write_text(CUDA)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.py").write_text(CUDA)
    (tmp_path / "sub").chmod(0)
    proc = run_cli(["."], cwd=tmp_path)
    (tmp_path / "sub").chmod(0o755)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "sub: cannot read folder: Permission denied" in proc.stderr
    assert ".to(_DEVICE())" in (tmp_path / "ok.py").read_text()


def test_folder_that_cannot_be_listed_is_one_line(tmp_path, monkeypatch):
    """What a folder without read permission does for a user other than root."""
    (tmp_path / "ok.py").write_text(CUDA)
    locked = tmp_path / "sub"
    (locked / "inner").mkdir(parents=True)
    real_scandir, real_stat = os.scandir, os.stat

    def refuse(path):
        if str(path).startswith(str(locked)):
            raise PermissionError(13, "Permission denied", str(path))

    def scandir(path="."):
        refuse(path)
        return real_scandir(path)

    def stat_(path, *args, **kwargs):
        if os.path.dirname(str(path)).startswith(str(locked)):
            refuse(path)
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "stat", stat_)
    files, errors = discover([str(tmp_path)])
    assert files == [tmp_path / "ok.py"]
    assert errors == [f"{locked}: cannot read folder: Permission denied"]


def test_pyproject_that_is_not_utf8_is_one_config_error(tmp_path):
    (tmp_path / "pyproject.toml").write_bytes(b"[tool.torchport]\n# \xff\xfe\n")
    (tmp_path / "ok.py").write_text(CUDA)
    proc = run_cli(["."], cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"torchport: {tmp_path / 'pyproject.toml'}: cannot")
    assert len(proc.stderr.splitlines()) == 1


@pytest.mark.parametrize("codec", CODECS)
def test_stdin_with_a_codec_cookie_gives_its_input_back(tmp_path, codec):
    # An editor that takes stdout as the new buffer must get the buffer back.
    data = CASES[f"codec_{codec}.py"]
    proc = run_cli(["-"], cwd=tmp_path, input=data)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stdout.encode() == data
    assert proc.stderr == f"-: cannot decode: '{codec}' is not a text encoding\n"


def test_file_changed_between_read_and_write_is_not_overwritten(tmp_path, monkeypatch):
    target = tmp_path / "train.py"
    target.write_text(CUDA)
    edited = CUDA.replace("ones", "zeros")  # same size: only the bytes tell
    real = process.process_source

    def edit_while_rewriting(*args, **kwargs):
        result = real(*args, **kwargs)
        target.write_text(edited)
        os.utime(target, ns=(0, 0))
        return result

    monkeypatch.setattr(process, "process_source", edit_while_rewriting)
    result = process.process_file(target, Job(WRITE, Options(), False))
    assert result.error == f"{target}: changed while torchport was running; not written"
    assert target.read_text() == edited
    assert not result.written
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"]  # no temporary file


def test_big_file_is_rewritten(tmp_path):
    """5 MB that mention CUDA: 20,000 equal lines (a diff of such a file used to be
    quadratic: minutes).  The run's limit is a hang guard; the work is checked to be
    linear by counting it, below, not by timing it."""
    target = tmp_path / "big.py"
    line = "# the same comment about cuda on every line " + "-" * 205 + "\n"
    text = CUDA + line * (5_000_000 // len(line))
    target.write_text(text)
    proc = run_cli([str(target)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = target.read_text()
    assert out.endswith(line * (5_000_000 // len(line)))
    assert ".to(_DEVICE())" in out


def _traced_lines(source: str) -> int:
    """How many Python lines the rewrite of ``source`` executes: a measure of its
    work that does not depend on the machine's speed."""
    executed = 0

    def count(frame, event, arg):
        nonlocal executed
        executed += 1
        return count

    job = Job(WRITE, Options(), True)
    sys.settrace(count)
    try:
        result = process.process_source("big.py", source.encode(), job, None)
    finally:
        sys.settrace(None)
    assert result.changed and result.error is None
    return executed


def test_work_grows_linearly_with_equal_lines():
    line = "# the same comment about cuda on every line\n"
    _traced_lines(CUDA + line)  # caches warmed, imports done
    work = {n: _traced_lines(CUDA + line * n) for n in (1000, 2000, 4000)}
    # Linear work adds the same per line: the step from 2,000 to 4,000 lines costs
    # twice the step from 1,000 to 2,000.  Quadratic work would cost six times.
    assert work[4000] - work[2000] <= 2.5 * (work[2000] - work[1000]), work


# -- the self-check: a faulty pass never reaches the disk ----------------------------
import libcst as cst  # noqa: E402

from codemod.rewrite import pipeline as transform  # noqa: E402
from codemod.passes.base import Pass  # noqa: E402
from codemod.passes.tensor_methods import TensorMethods  # noqa: E402


class EmitsInvalidCode(Pass):
    """`.cuda()` becomes `x +<newline>y` outside parentheses: not Python."""

    def leave_Call(self, original_node, updated_node):
        if m_cuda(updated_node) and self.record_and_decide(original_node, "TP201"):
            # libcst validates a Name's text; a line break inside an operator is not
            return cst.BinaryOperation(
                left=cst.Name("x"),
                operator=cst.Add(whitespace_after=cst.ParenthesizedWhitespace()),
                right=cst.Name("y"),
            )
        return updated_node


class ForgetsParentheses(Pass):
    """`(a + b).cuda()` becomes `a + b.type`: valid text, another tree."""

    def leave_Call(self, original_node, updated_node):
        if m_cuda(updated_node) and self.record_and_decide(original_node, "TP201"):
            inner = updated_node.func.value.with_changes(lpar=[], rpar=[])
            return cst.Attribute(value=inner, attr=cst.Name("type"))
        return updated_node


class Crashes(Pass):
    def leave_Call(self, original_node, updated_node):
        if m_cuda(updated_node):
            raise KeyError("boom")
        return updated_node


def m_cuda(call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "cuda"


SUM_CUDA = "import torch\n\na, b = torch.ones(2), torch.ones(2)\nx = (a + b).cuda()\n"


@pytest.mark.parametrize(
    "faulty, problem",
    [
        (EmitsInvalidCode, "produced invalid Python"),
        (ForgetsParentheses, "parses into a different tree than the one built"),
        (Crashes, "failed: KeyError: 'boom'"),
    ],
)
def test_faulty_pass_is_caught_and_named(faulty, problem):
    with pytest.raises(transform.RewriteError) as caught:
        transform.rewrite_source(SUM_CUDA, Options(), passes=(faulty, TensorMethods))
    message = str(caught.value)
    assert problem in message
    assert f"pass {faulty.__name__}" in message
    if faulty is not Crashes:
        assert "(TP201)" in message  # the rules the pass applied


def test_faulty_pass_leaves_the_file_untouched(tmp_path, monkeypatch):
    target = tmp_path / "train.py"
    target.write_text(SUM_CUDA)
    real = transform.rewrite_source

    def with_faulty_pass(*args, **kwargs):
        return real(*args, **dict(kwargs, passes=(ForgetsParentheses,)))

    monkeypatch.setattr(transform, "rewrite_source", with_faulty_pass)
    result = process.process_file(target, Job(WRITE, Options(), True))
    assert result.error.startswith(f"{target}: internal error: pass ForgetsParentheses")
    assert result.error.endswith("; file left untouched")
    assert not result.written and target.read_text() == SUM_CUDA


def test_a_crash_in_one_file_does_not_stop_the_run(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text(SUM_CUDA)
    (tmp_path / "b.py").write_text(CUDA)
    real = transform.rewrite_source

    def crash_on_sums(source, *args, **kwargs):
        if "a + b" in source:
            raise ZeroDivisionError("a bug")
        return real(source, *args, **kwargs)

    monkeypatch.setattr(transform, "rewrite_source", crash_on_sums)
    job = Job(WRITE, Options(), False)
    results = pool.run([tmp_path / "a.py", tmp_path / "b.py"], job, jobs=2)
    assert results[0].error == (
        f"{tmp_path / 'a.py'}: internal error: ZeroDivisionError: a bug;"
        " file left untouched"
    )
    assert results[1].written and ".to(_DEVICE())" in (tmp_path / "b.py").read_text()
    assert (tmp_path / "a.py").read_text() == SUM_CUDA


def test_a_dead_worker_is_reported_not_hung(tmp_path, monkeypatch):
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(CUDA)
    (tmp_path / "die.py").write_text(CUDA + "# die\n")
    real = process.process_source

    def die_on_marker(display, data, *args, **kwargs):
        if b"# die" in data:
            os._exit(9)
        return real(display, data, *args, **kwargs)

    monkeypatch.setattr(process, "process_source", die_on_marker)
    files = sorted(tmp_path.iterdir())
    results = pool.run(files, Job(CHECK, Options(), False), jobs=2)
    errors = [r.error for r in results if r.error]
    assert f"{tmp_path / 'die.py'}: a worker process died" in " ".join(errors)
    assert len(results) == 4
