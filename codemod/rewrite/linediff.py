"""A line diff that stays fast on big files.

``difflib.SequenceMatcher(autojunk=False)`` is quadratic on files with many equal
lines (blank lines, ``return x``): a 200 kB file took minutes. Here the common
head and tail are taken off, lines that occur once on each side anchor the match
(patience diff), and difflib only sees the short stretches between anchors.
"""

from __future__ import annotations

import bisect
import difflib
import os
from typing import Dict, List, Sequence, Tuple

from codemod.model.lines import split_lines
from codemod.model.text import printable

Opcode = Tuple[str, int, int, int, int]

# Above this many line pairs a stretch without anchors is matched with difflib's
# popularity heuristic (still a correct diff, maybe not the shortest one).
_EXACT_LIMIT = 4_000_000


def opcodes(a: Sequence[str], b: Sequence[str]) -> List[Opcode]:
    """Like ``SequenceMatcher(None, a, b, autojunk=False).get_opcodes()``."""
    blocks: List[Tuple[int, int, int]] = []  # (i, j, size) of equal runs
    stack = [(0, len(a), 0, len(b))]
    while stack:
        a1, a2, b1, b2 = stack.pop()
        while a1 < a2 and b1 < b2 and a[a1] == b[b1]:
            blocks.append((a1, b1, 1))
            a1, b1 = a1 + 1, b1 + 1
        while a1 < a2 and b1 < b2 and a[a2 - 1] == b[b2 - 1]:
            a2, b2 = a2 - 1, b2 - 1
            blocks.append((a2, b2, 1))
        if a1 == a2 or b1 == b2:
            continue
        anchors = _anchors(a, a1, a2, b, b1, b2)
        if anchors:
            previous = (a1, b1)
            for i, j in anchors:
                blocks.append((i, j, 1))
                stack.append((previous[0], i, previous[1], j))
                previous = (i + 1, j + 1)
            stack.append((previous[0], a2, previous[1], b2))
        else:
            exact = (a2 - a1) * (b2 - b1) <= _EXACT_LIMIT
            matcher = difflib.SequenceMatcher(
                None, a[a1:a2], b[b1:b2], autojunk=not exact
            )
            for i, j, size in matcher.get_matching_blocks():
                if size:
                    blocks.append((a1 + i, b1 + j, size))
    return _to_opcodes(sorted(blocks), len(a), len(b))


def _anchors(a, a1, a2, b, b1, b2) -> List[Tuple[int, int]]:
    """Lines unique on both sides, as the longest run in the same order."""
    count_a: Dict[str, int] = {}
    for i in range(a1, a2):
        count_a[a[i]] = count_a.get(a[i], 0) + 1
    count_b: Dict[str, int] = {}
    where_b: Dict[str, int] = {}
    for j in range(b1, b2):
        count_b[b[j]] = count_b.get(b[j], 0) + 1
        where_b[b[j]] = j
    pairs = [
        (i, where_b[a[i]])
        for i in range(a1, a2)
        if count_a[a[i]] == 1 and count_b.get(a[i]) == 1
    ]
    return _longest_increasing(pairs)


def _longest_increasing(pairs: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
    """The longest subsequence of ``pairs`` (sorted by i) increasing in j."""
    tails: List[int] = []  # j of the last pair of the best run of each length
    tail_index: List[int] = []
    back: List[int] = []
    for index, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tails, j)
        back.append(tail_index[k - 1] if k else -1)
        if k == len(tails):
            tails.append(j)
            tail_index.append(index)
        else:
            tails[k] = j
            tail_index[k] = index
    run: List[Tuple[int, int]] = []
    index = tail_index[-1] if tail_index else -1
    while index >= 0:
        run.append(pairs[index])
        index = back[index]
    return run[::-1]


def _to_opcodes(blocks: List[Tuple[int, int, int]], n: int, m: int) -> List[Opcode]:
    codes: List[Opcode] = []
    i = j = 0
    for bi, bj, size in blocks + [(n, m, 0)]:
        if i < bi or j < bj:
            tag = "replace" if i < bi and j < bj else "delete" if i < bi else "insert"
            codes.append((tag, i, bi, j, bj))
        if size:
            if codes and codes[-1][0] == "equal" and codes[-1][2] == bi:
                _, i1, _, j1, _ = codes.pop()
                codes.append(("equal", i1, bi + size, j1, bj + size))
            else:
                codes.append(("equal", bi, bi + size, bj, bj + size))
        i, j = bi + size, bj + size
    return codes


def unified_diff(display: str, old: str, new: str) -> str:
    name = printable(display)
    # git-style a/ b/ prefixes for relative paths; an absolute path stands as it is.
    old_name, new_name = (
        (name, name) if os.path.isabs(name) else (f"a/{name}", f"b/{name}")
    )
    lines = difflib.unified_diff(
        split_lines(old),
        split_lines(new),
        fromfile=old_name,
        tofile=new_name,
    )
    out = []
    for line in lines:
        out.append(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        )
    return "".join(out)
