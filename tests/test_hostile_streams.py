"""Standard streams and names that fail: Ctrl-C while starting,
a closed standard input or output, a full disk under standard output, and file
names that are not UTF-8 in every format. Each is one line and exit 2 (130 for
Ctrl-C), never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.parse

import pytest

from tests.cli_helpers import GIT_ENV, ROOT

CUDA = "import torch\n\nx = torch.ones(2).cuda()\nprint(x.sum().item())\n"
LEFT = 'import torch\n\nDEVICES = ["cuda", "cpu"]\nprint(DEVICES)\n'
# The console script, with Ctrl-C pressed as the module named first is imported:
# each of those is imported in a phase of a start (the command line, the
# configuration, the exclude patterns, the rules, the output), in this process
# only (the parser is imported by the worker, even with -j1, which reports its own
# interruption).
INTERRUPTED_AT = """
import os, sys
module, marker = sys.argv[1:3]
started = os.getpid()

class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == module and os.getpid() == started:
            sys.meta_path.remove(self)
            open(marker, "w").close()
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, Interrupt())
sys.argv = ["torchport", *sys.argv[3:]]
from codemod.cli import main
sys.exit(main())
"""
FULL = ["-j1", "--output-format", "full"]


def _env(**extra):
    return dict(os.environ, PYTHONPATH=str(ROOT), **extra)


def _shell(command: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=_env(), capture_output=True, text=True
    )


@pytest.mark.parametrize(
    "module",
    [
        "click",
        "codemod.cli.commands",
        "tomllib",
        "pathspec",
        "codemod.rules",
        "codemod.output.full",  # the file is rewritten: its report is being shown
    ],
)
def test_ctrl_c_while_starting_is_one_line(tmp_path, module):
    (tmp_path / "a.py").write_text(CUDA)
    (tmp_path / "pyproject.toml").write_text('[tool.torchport]\nexclude = ["b/"]\n')
    marker = tmp_path.parent / f"{tmp_path.name}.interrupted"
    proc = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_AT, module, str(marker), *FULL, "."],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
    )
    assert marker.exists(), f"{module} was not imported: {proc.stderr}"
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and "Aborted" not in proc.stderr
    assert proc.stderr.startswith("torchport: interrupted"), proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    written = (tmp_path / "a.py").read_text()
    if module == "codemod.output.full":  # rewritten whole before the output
        assert ".to(_DEVICE())" in written and compile(written, "a.py", "exec")
    else:
        assert written == CUDA


def test_a_closed_standard_input(tmp_path):
    proc = _shell(f"{sys.executable} -m codemod - <&-", tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "torchport: cannot read standard input: it is closed\n"


@pytest.mark.parametrize("mode", ["fix", "check"])
def test_a_closed_standard_output_rewrites_nothing(tmp_path, mode):
    (tmp_path / "a.py").write_text(CUDA)
    proc = _shell(f"{sys.executable} -m codemod {mode} . >&-", tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "torchport: standard output is closed\n"
    assert (tmp_path / "a.py").read_text() == CUDA


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_under_the_diff(tmp_path):
    (tmp_path / "a.py").write_text(CUDA)
    proc = _shell(f"{sys.executable} -m codemod --diff . > /dev/full", tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (
        "torchport: cannot write to standard output: No space left on device\n"
    )
    assert (tmp_path / "a.py").read_text() == CUDA


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_under_a_rewrite_says_the_files_were_rewritten(tmp_path):
    """The files are written before their report: each whole (atomically), so the
    rewrite stands, and exit 2 says that what was left could not be shown."""
    (tmp_path / "a.py").write_text(CUDA + LEFT.replace("import torch\n\n", ""))
    proc = _shell(f"{sys.executable} -m codemod . > /dev/full", tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (
        "torchport: cannot write to standard output: No space left on device;"
        " 1 file was rewritten all the same\n"
    )
    assert ".to(_DEVICE())" in (tmp_path / "a.py").read_text()


def test_a_reader_that_goes_away_ends_the_output_quietly(tmp_path):
    for i in range(30):
        (tmp_path / f"m{i}.py").write_text(LEFT)
    proc = _shell(f"{sys.executable} -m codemod check . | head -n 1", tmp_path)
    assert proc.stdout.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "BrokenPipe" not in proc.stderr


NAME = b"caf\xe9-\xff.py"  # Latin-1 and a byte that is in no encoding's text


@pytest.fixture
def latin1_name(tmp_path):
    os.chdir(tmp_path)
    with open(os.fsencode(str(tmp_path)) + b"/" + NAME, "wb") as handle:
        handle.write(CUDA.encode() + b'D = ["cuda"]\n')
    yield tmp_path


@pytest.mark.parametrize("output_format", ["text", "full", "json", "github", "sarif"])
def test_a_name_that_is_not_utf8_in_every_format(latin1_name, output_format):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "codemod",
            "check",
            "--output-format",
            output_format,
            ".",
        ],
        cwd=latin1_name,
        env=_env(PYTHONIOENCODING="utf-8"),
        capture_output=True,
    )
    assert proc.returncode == 1, proc.stderr
    assert b"Traceback" not in proc.stderr
    out = proc.stdout.decode("utf-8")  # strict: every byte is UTF-8
    if output_format in ("json", "sarif"):
        log = json.loads(out)
        assert "\\udc" not in out  # no lone surrogate, which strict parsers refuse
    if output_format == "sarif":
        uris = {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]
        }
        assert uris == {"caf%E9-%FF.py"}
    elif output_format == "json":
        assert {r["filename"] for r in log} == {"caf\\xe9-\\xff.py"}
    else:
        assert "caf\\xe9-\\xff.py" in out


@pytest.mark.parametrize("report", ["r.html", "r.md"])
def test_a_name_that_is_not_utf8_in_the_report(latin1_name, report):
    proc = subprocess.run(
        [sys.executable, "-m", "codemod", "report", ".", "-o", report],
        cwd=latin1_name,
        env=_env(PYTHONIOENCODING="utf-8"),
        capture_output=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "caf\\xe9-\\xff.py" in (latin1_name / report).read_text(encoding="utf-8")


# Names that would deceive if written raw: byte 0x9B alone (not UTF-8; a
# terminal's CSI), U+202E (right-to-left override, valid UTF-8), ESC.
DECEIVING = [b"\x9b2J-x.py", b"a\xe2\x80\xaeyp.txt.py", b"\x1b[31mred.py", NAME]
RAW = [b"\x9b", b"\xc2\x9b", b"\xe2\x80\xae", b"\x1b", b"\xe9", b"\xff"]


def _named(tmp_path, name: bytes) -> None:
    with open(os.fsencode(str(tmp_path)) + b"/" + name, "wb") as handle:
        handle.write(CUDA.encode() + b'D = ["cuda"]\n')


def _clean(data: bytes) -> str:
    """``data`` holds none of the raw bytes, and is UTF-8 (strictly)."""
    for raw in RAW:
        assert raw not in data, (raw, data[:300])
    return data.decode("utf-8")


@pytest.mark.parametrize("name", DECEIVING, ids=ascii)
@pytest.mark.parametrize(
    "args",
    [
        ["check", "--output-format", "text"],
        ["check", "--output-format", "full"],
        ["check", "--output-format", "json"],
        ["check", "--output-format", "github"],
        ["check", "--output-format", "sarif"],
        ["check", "--statistics"],
        ["check", "--show-files"],
        ["--diff"],
        ["report", "-o", "r.html"],
        ["report", "-o", "r.md"],
    ],
    ids=" ".join,
)
def test_no_output_holds_a_deceiving_name_raw(tmp_path, name, args):
    _named(tmp_path, name)
    proc = subprocess.run(
        [sys.executable, "-m", "codemod", *args, "."],
        cwd=tmp_path,
        env=_env(PYTHONIOENCODING="utf-8"),
        capture_output=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    out, err = _clean(proc.stdout), _clean(proc.stderr)
    assert "Traceback" not in err
    if args[0] == "report":
        out = _clean((tmp_path / args[-1]).read_bytes())
    if "json" in args or "sarif" in args:
        assert "\\udc" not in out
        log = json.loads(out)
    if "json" in args:
        # The name as it is (JSON escapes its controls), its bad bytes as \xNN.
        text = name.decode("utf-8", "surrogateescape")
        exact = "".join(
            f"\\x{ord(c) - 0xDC00:02x}" if "\udc80" <= c <= "\udcff" else c
            for c in text
        )
        assert {r["filename"] for r in log} == {exact}
    elif "sarif" in args:  # the URI names the file: its bytes, percent-encoded
        [uri] = {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]
        }
        assert urllib.parse.unquote_to_bytes(uri) == name
    elif "--statistics" not in args and "--diff" not in args:
        assert _escaped(name) in out, out[:500]


def _escaped(name: bytes) -> str:
    """How a name is shown: each byte that is not UTF-8 as ``\\xNN``, each C1,
    C0 or bidirectional control as ``\\xNN`` / ``\\uNNNN``; in a patch, C-style
    in quotes."""
    text = name.decode("utf-8", "surrogateescape")
    out = ""
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:
            out += f"\\x{code - 0xDC00:02x}"
        elif code < 0x20 or 0x7F <= code <= 0x9F:
            out += f"\\x{code:02x}"
        elif code == 0x202E:
            out += "\\u202e"
        else:
            out += char
    return out


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("name", DECEIVING, ids=ascii)
def test_the_diff_quotes_a_deceiving_name_as_git_and_git_applies_it(tmp_path, name):
    _named(tmp_path, name)
    proc = subprocess.run(
        [sys.executable, "-m", "codemod", "--diff", "."],
        cwd=tmp_path,
        env=_env(PYTHONIOENCODING="utf-8"),
        capture_output=True,
    )
    assert proc.returncode == 1, proc.stderr
    _clean(proc.stdout.split(b"\n@@", 1)[0])  # the names; the code is the patch's
    first = proc.stdout.split(b"\n", 1)[0]
    assert first.startswith(b'--- "a/') and first.endswith(b'"'), first
    env = dict(os.environ, **GIT_ENV)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True, env=env)
    applied = subprocess.run(
        ["git", "apply", "-"], cwd=tmp_path, input=proc.stdout, capture_output=True
    )
    assert applied.returncode == 0, applied.stderr
    path = os.fsencode(str(tmp_path)) + b"/" + name
    with open(path, "rb") as handle:
        patched = handle.read()
    _named(tmp_path, name)
    subprocess.run(
        [sys.executable, "-m", "codemod", "."], cwd=tmp_path, env=_env(), check=False
    )
    with open(path, "rb") as handle:
        assert patched == handle.read()
