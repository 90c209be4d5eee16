"""The rewrite does not depend on the interpreter's hash seed or memory layout.

A pass once keyed nodes it built by ``id()``; a node freed during the traversal could
lend its id to a new one, which then passed for a ``_DEVICE().type`` (seen with
PYTHONHASHSEED=16 on ``TP102/format_template_fields``). Every fixture is rewritten
under several seeds in fresh interpreters.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.cli_helpers import ROOT

CHECK = """
from tests.test_fixtures import _rewrite
from tests.fixture_cases import before_files, after_of
for before in before_files():
    if _rewrite(before.read_text(encoding="utf-8")).code != after_of(before).read_text(
        encoding="utf-8"
    ):
        print(before)
"""


@pytest.mark.parametrize("seed", ["0", "16", "4242"])
def test_every_fixture_rewrites_the_same_under_any_hash_seed(seed):
    env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard, far above the seconds this takes
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == "", f"rewritten differently with seed {seed}:\n{proc.stdout}"
