"""Every kind of bad input at once, in one run, as a user without root's power
over files: every file outside the named tree, and every bad file inside it, is
byte for byte what it was (each is hashed before and after); the run exits 2 with
one ``path: error`` line per bad input, and every good file is rewritten."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path


from tests.bytes_helpers import (
    CUDA,
    chown_tree,
    error_lines,
    hashes,
    normal_user,
    run_with_hook,
)
from tests.test_bytes_notebook import CUDA_CELL as CELL
from tests.test_bytes_paths import _deep_folder

MINE = dict(CELL, source="mine()\n")
TAIL = '"metadata": {}, "nbformat": 4, "nbformat_minor": 5'
BAD = {  # name -> bytes; each one error line, left as it was
    "dup_cells.ipynb": (
        f'{{"cells": [{json.dumps(MINE)}], {TAIL}, "cells": [{json.dumps(CELL)}]}}'
    ).encode(),
    "dup_source.ipynb": (
        '{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source":'
        ' "mine()\\n", "source": "import torch\\nx = torch.ones(2).cuda()\\n"}],'
        f" {TAIL}}}"
    ).encode(),
    "deep.py": (
        "import torch\nx = " + "(" * 1300 + "torch.ones(2).cuda()" + ")" * 1300 + "\n"
    ).encode(),
    "huge.py": (
        "import torch\nx = torch.tensor(["
        + ", ".join(map(str, range(40_000)))
        + "]).cuda()\n"
    ).encode(),
    "minus.py": (
        "import torch\nx = " + "-" * 20_000 + "torch.ones(2).cuda()\n"
    ).encode(),
    "py314_broken.py": (
        b"import torch\ntry:\n    x = torch.ones(2).cuda()\n"
        b"except ValueError, TypeError:\n    pass\ny = (\n"
    ),
    "e\u202erp.py".encode(): b"x = torch.cuda(\n",
    b"e\x9b.py": b"x = torch.cuda(\n",
}
GOOD = [
    "ok.py",
    "py314.py",
    "sub/a.py",
    "meta.py",
    "zero_ignore/ok.py",
    "pipe_ignore/ok.py",
    "ok.ipynb",
]
PY314 = b"import torch\ntry:\n    x = torch.ones(2).cuda()\nexcept ValueError, TypeError:\n    pass\n"


def _build(base: Path):
    tree, outside = base / "tree", base / "outside"
    (tree / "sub").mkdir(parents=True)
    (tree / ".git" / "info").mkdir(parents=True)
    outside.mkdir()
    for name in ("v.py", "a.py"):
        (outside / name).write_text(CUDA)
    (outside / "cells.ipynb").write_text(
        json.dumps({"cells": [CELL], **json.loads("{" + TAIL + "}")})
    )
    for name, data in BAD.items():
        with open(os.path.join(os.fsencode(tree), os.fsencode(name)), "wb") as handle:
            handle.write(data)
    for name in GOOD:
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(CUDA)
    (tree / "py314.py").write_bytes(PY314)
    (tree / "ok.ipynb").write_text(
        json.dumps({"cells": [CELL], "metadata": {}, "nbformat": 4})
    )
    # links out of the tree: a folder the walk must not enter, one named through
    (tree / "ld").symlink_to("../outside", target_is_directory=True)
    # ignore files that never end, and an exclude file that blocks
    os.mkfifo(tree / "pipe_ignore" / ".gitignore")
    (tree / "zero_ignore" / ".gitignore").symlink_to("/dev/zero")
    os.mkfifo(tree / ".git" / "info" / "exclude")
    # a folder that can be listed, not entered; a path too long for the system
    (tree / "locked").mkdir()
    (tree / "locked" / "a.py").write_text(CUDA)
    deep = _deep_folder(tree / "sub", 25)
    return tree, outside, deep


def test_every_kind_of_bad_input_at_once(reachable_tmp):
    prefix, uid, gid = normal_user()
    tree, outside, deep = _build(reachable_tmp)
    meta = tree / "meta.py"
    chown_tree(reachable_tmp, uid, gid)
    os.chmod(meta, 0o6755)  # setuid and setgid, kept by the rewrite
    has_xattr = shutil.which("setfattr") is not None
    if has_xattr:
        subprocess.run(
            ["setfattr", "-n", "user.kept", "-v", "yes", str(meta)], check=True
        )
    (tree / "locked").chmod(0o444)
    appended = tree / "appended"
    appended.mkdir()
    (appended / "a.py").write_text(CUDA)
    os.chown(appended, uid, gid)
    os.chown(appended / "a.py", uid, gid)
    chattr = shutil.which("chattr")
    append_only = (
        chattr is not None
        and subprocess.run(
            [chattr, "+a", str(appended)], capture_output=True
        ).returncode
        == 0
    )
    inside_before, outside_before = hashes(tree), hashes(outside)
    # and, once the walk is done, sub/ becomes a link to ../outside (a checkout)
    swap = (
        "import os\n"
        "os.rename('sub', 'sub.old')\n"
        "os.symlink('../outside', 'sub')\n"
    )
    try:
        proc = run_with_hook([".", "ld/v.py"], tree, "discovered", swap, prefix)
    finally:
        (tree / "locked").chmod(0o755)
        if append_only:
            subprocess.run([chattr, "-a", str(appended)], check=True)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, proc.stderr
    # nothing outside changed; no bad file inside changed
    assert hashes(outside) == outside_before
    after = hashes(tree)
    unchanged = [os.fsdecode(name) for name in BAD] + [
        "locked/a.py",
        "ld",
        "appended/a.py",
    ]
    for name in unchanged:
        if name in inside_before:
            assert after[name] == inside_before[name], name
    # every good file rewritten
    for name in GOOD:
        if name == "sub/a.py":
            continue  # its folder became a link: not read, reported below
        data = (tree / name).read_text()
        assert ".to(_DEVICE())" in data, (name, proc.stderr)
    info = os.stat(meta)
    assert oct(info.st_mode & 0o7777) == oct(0o6755) and info.st_uid == uid
    if has_xattr:
        assert os.getxattr(meta, "user.kept") == b"yes"
    # one line per bad input, naming it
    expected = [
        'dup_cells.ipynb: cannot parse: duplicate key "cells"',
        'dup_source.ipynb: cannot parse: duplicate key "source"',
        "deep.py: cannot parse: brackets nested more than 200 deep",
        "huge.py: cannot rewrite: the statement on line 2 is",
        "minus.py: cannot parse: nested too deep or too large",
        "py314_broken.py: cannot parse: line 4: multiple exception types must be"
        " parenthesized (Python 3.14 grammar",
        "e\\u202erp.py: cannot parse:",
        "e\\x9b.py: cannot parse:",
        "ld/v.py: named through a linked folder",
        f"{tree / 'pipe_ignore' / '.gitignore'}: not a regular file (a named pipe)",
        f"{tree / 'zero_ignore' / '.gitignore'}: not a regular file (a character"
        " device)",
        f"{tree / '.git' / 'info' / 'exclude'}: not a regular file (a named pipe)",
        "locked: cannot enter folder: Permission denied",
        f"sub/a.py: folder {tree / 'sub'} on its path is a symbolic link now",
        "sub/" + "d" * 200 + "/",  # ...: path longer than the system allows
    ]
    if append_only:
        expected.append("appended/a.py: read-only folder (append-only: chattr +a)")
    lines = error_lines(proc.stderr)
    for start in expected:
        found = [line for line in lines if line.startswith(start)]
        assert len(found) == 1, (start, lines)
    assert len(lines) == len(expected), "\n".join(lines)
    assert (
        "path longer than the system allows"
        in [line for line in lines if line.startswith("sub/" + "d" * 200)][0]
    )
