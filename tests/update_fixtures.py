"""Regenerate fixture outputs: ``python -m tests.update_fixtures [CASE-SUBSTRING]``.

Writes <case>.after.py and <case>.diagnostics.txt from the current rewrite, like a
snapshot tool. Review every change with ``git diff fixtures/`` before committing.
"""

from __future__ import annotations

import sys

from codemod.rewrite.pipeline import RewriteError
from tests.fixture_cases import (
    after_of,
    before_files,
    case_id,
    diagnostics_of,
    program_files,
)
from tests.test_fixtures import _remaining, _rewrite


def main(argv):
    wanted = argv[1] if len(argv) > 1 else ""
    for before in before_files() + program_files():
        if wanted not in case_id(before):
            continue
        if "/style/" in case_id(before):
            continue  # reviewed by hand: the after file is the wanted output
        try:
            result = _rewrite(before.read_text(encoding="utf-8"))
        except RewriteError as error:
            # What torchport does with the file: reports it and leaves it untouched.
            print(f"{case_id(before)}: internal error, left as it is: {error}")
            after_of(before).write_text(
                before.read_text(encoding="utf-8"), encoding="utf-8"
            )
            continue
        after_of(before).write_text(result.code, encoding="utf-8")
        remaining = _remaining(result)
        diagnostics = diagnostics_of(before)
        if remaining:
            diagnostics.write_text(remaining, encoding="utf-8")
        elif diagnostics.exists():
            diagnostics.unlink()
        print(case_id(before))


if __name__ == "__main__":
    main(sys.argv)
