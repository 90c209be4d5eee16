"""The rewritten file put together, and where each line of the input went in it.

Most lines are copied as they were: they go in runs, one step and one entry a run
(``LineMap``), not one a line; a file of a million comment lines and one site
costs a few runs, not a million steps and a dictionary of a million lines.
"""

from __future__ import annotations

import bisect
from itertools import islice
from typing import Dict, Iterator, List, Optional, Sequence, Tuple


class LineMap:
    """Input line -> output line, as a mapping: runs of lines copied together, and
    the lines of changed spans one by one."""

    def __init__(self) -> None:
        self._starts: List[int] = []  # the first input line of each run
        self._runs: List[Tuple[int, int, int]] = []  # (first, last, first output)
        self._lines: Dict[int, int] = {}

    def add_run(self, first: int, last: int, out: int) -> None:
        self._starts.append(first)
        self._runs.append((first, last, out))

    def __setitem__(self, line: int, out: int) -> None:
        self._lines[line] = out

    def get(self, line: int, default: Optional[int] = None) -> Optional[int]:
        if line in self._lines:
            return self._lines[line]
        index = bisect.bisect_right(self._starts, line) - 1
        if index >= 0:
            first, last, out = self._runs[index]
            if line <= last:
                return out + line - first
        return default

    def __getitem__(self, line: int) -> int:
        out = self.get(line)
        if out is None:
            raise KeyError(line)
        return out

    def __contains__(self, line: object) -> bool:
        return isinstance(line, int) and self.get(line) is not None

    def items(self) -> Iterator[Tuple[int, int]]:
        """Every (input line, output line), in input order."""
        runs = iter(self._runs)
        singles = iter(sorted(self._lines.items()))
        run, single = next(runs, None), next(singles, None)
        while run is not None or single is not None:
            if single is None or (run is not None and run[0] < single[0]):
                first, last, out = run
                yield from (
                    (line, out + line - first) for line in range(first, last + 1)
                )
                run = next(runs, None)
            else:
                yield single
                single = next(singles, None)

    def __len__(self) -> int:
        return len(self._lines) + sum(last - first + 1 for first, last, _ in self._runs)


def assemble(
    lines: Sequence[str], outputs, local_maps, added, linear: bool = True
) -> Tuple[str, LineMap]:
    """The new text, and where each original line went. ``outputs``: each changed
    span's new lines, ``local_maps`` where each of its lines went in them; ``added``:
    insertions after a line (0: at the top). ``linear``: every line but the last ends
    with ``\\n`` (no lone ``\\r``), so a run's lines go one after another."""
    out: List[str] = []
    mapping = LineMap()
    inserts: Dict[int, List[str]] = {}
    for insertion in added:
        inserts.setdefault(insertion.after_line, []).append(insertion.text)
    starts = {start: (start, end) for start, end in outputs}
    # Where a run of copied lines stops: a changed span, a line something goes after.
    stops = sorted(set(starts) | {after + 1 for after in inserts if after >= 1})
    written = 0  # lines in ``out`` so far

    def emit(parts: Sequence[str]) -> None:
        nonlocal written
        out.extend(parts)
        written += sum(part.count("\n") for part in parts)

    emit(inserts.get(0, []))
    number, index, total = 1, 0, len(lines)
    while number <= total:
        if number in starts:
            first, last = starts[number]
            for offset, line_number in enumerate(range(first, last + 1), start=1):
                mapping[line_number] = written + local_maps[(first, last)][offset]
            emit(outputs[(first, last)])
        else:
            while index < len(stops) and stops[index] <= number:
                index += 1
            last = min(stops[index] - 1, total) if index < len(stops) else total
            if linear:
                mapping.add_run(number, last, written + 1)
                out.extend(islice(lines, number - 1, last))
                written += last - number + lines[last - 1].endswith("\n")
            else:
                for line_number in range(number, last + 1):
                    mapping[line_number] = written + 1
                    emit([lines[line_number - 1]])
        emit(inserts.get(last, []))
        number = last + 1
    return "".join(out), mapping
