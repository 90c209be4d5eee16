"""Output that cannot deceive: a file name's bidirectional controls (U+202E turns
``evil\u202eyp.py`` into what reads as ``evilyp.py`` backwards), and the raw bytes
of a name that is not UTF-8 (0x9B is a terminal's CSI), are shown escaped; no lone
surrogate needs to reach a JSON encoder."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from codemod.model.text import printable, printable_path
from tests.bytes_helpers import CUDA, HANG_GUARD_S
from tests.cli_helpers import ROOT

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


@pytest.mark.parametrize("char", list(BIDI), ids=[f"U+{ord(c):04X}" for c in BIDI])
def test_bidirectional_controls_are_escaped(char):
    assert printable(f"a{char}b.py") == f"a\\u{ord(char):04x}b.py"


def test_undecodable_bytes_of_a_name_are_shown_as_those_bytes():
    # ascii(): a failing comparison must not carry a lone surrogate into the report
    name = os.fsdecode(b"caf\x9b\xff.py")  # Python's surrogateescape: U+DC9B U+DCFF
    assert ascii(printable(name)) == ascii("caf\\x9b\\xff.py")
    assert ascii(printable_path(name)) == ascii("caf\\x9b\\xff.py")
    assert ascii(printable("\ud800x")) == ascii("\\ud800x")  # any lone surrogate


def test_without_surrogates_gives_json_strict_parsers_take():
    from codemod.model.text import without_surrogates

    name = os.fsdecode(b"caf\x9b.py") + " \u202e \u00e9"
    safe = without_surrogates(name)
    assert ascii(safe) == ascii("caf\\x9b.py \u202e \u00e9")  # surrogates only
    for ensure_ascii in (True, False):
        text = json.dumps({"filename": safe}, ensure_ascii=ensure_ascii)
        text.encode("utf-8")  # no lone surrogate to encode
        assert "\\ud" not in text.lower()
    with pytest.raises(UnicodeEncodeError):
        json.dumps(name, ensure_ascii=False).encode("utf-8")  # what it avoids


def test_a_run_over_deceptive_names_prints_no_raw_control(tmp_path):
    names = [
        "evil\u202eyp.py".encode(),
        b"raw\x9b2J.py",  # not UTF-8: byte 0x9B, CSI on an 8-bit terminal
        "bad\u2066x\u2069.py".encode(),
    ]
    for name in names:
        with open(os.path.join(os.fsencode(tmp_path), name), "wb") as handle:
            handle.write(CUDA.encode())
        with open(os.path.join(os.fsencode(tmp_path), b"e" + name), "wb") as handle:
            handle.write(b"x = torch.cuda(\n")  # an error line naming it
    proc = subprocess.run(
        [sys.executable, "-m", "codemod", "--check", "."],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8"),
        capture_output=True,
        timeout=HANG_GUARD_S,
    )
    assert proc.returncode == 2, proc.stderr
    for stream in (proc.stdout, proc.stderr):
        assert b"\x9b" not in stream and b"\xc2\x9b" not in stream
        text = stream.decode("utf-8")  # strict: no lone surrogate got out
        assert not any(c in text for c in BIDI), ascii(text)
    out = proc.stdout.decode()
    assert "evil\\u202eyp.py:3:5: TP201" in out
    assert "raw\\x9b2J.py:3:5: TP201" in out
    assert "bad\\u2066x\\u2069.py:3:5: TP201" in out
    err = proc.stderr.decode()
    assert "eraw\\x9b2J.py: cannot parse" in err
