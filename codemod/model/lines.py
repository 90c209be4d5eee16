"""Source lines as Python counts them.

``str.splitlines`` also breaks at form feeds, vertical tabs and a few Unicode
separators, which Python source may contain inside a line: line numbers would drift
from the ones ``ast`` and libcst report. Only ``\\r\\n``, ``\\r`` and ``\\n`` end a line.
"""

from __future__ import annotations

import re
from typing import List

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str, keepends: bool = True) -> List[str]:
    lines = _LINE.findall(text)
    if keepends:
        return lines
    return [line.rstrip("\r\n") for line in lines]
