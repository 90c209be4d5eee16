"""Regenerate fixture outputs: ``python -m tests.update_fixtures [CASE-SUBSTRING]``.

Writes <case>.after.py and <case>.diagnostics.txt from the current rewrite, like a
snapshot tool. Review every change with ``git diff fixtures/`` before committing.
"""

from __future__ import annotations

import sys

from tests.fixture_cases import after_of, before_files, case_id, diagnostics_of
from tests.test_fixtures import _remaining, _rewrite


def main(argv):
    wanted = argv[1] if len(argv) > 1 else ""
    for before in before_files():
        if wanted not in case_id(before):
            continue
        result = _rewrite(before.read_text(encoding="utf-8"))
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
