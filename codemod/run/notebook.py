"""Jupyter notebooks: rewrite the code cells, keep every other byte of the file.

The code cells run in one namespace, top to bottom, so they are rewritten as one
module (an ``import torch`` in cell 1 is what ``torch.cuda`` in cell 5 refers to,
and the device binding is written once, after the imports, in the cell that has
them). Cells are joined with marker comments and split again afterwards.

IPython syntax is not Python: ``%magic``, ``!shell``, ``x = !cmd`` and ``obj?``
lines, and the first line of the cell magics whose body is Python (``%%time``,
``%%timeit``, ``%%capture``, ``%%prun``), are masked with a ``pass`` line while the
cell is rewritten, and put back unchanged. Other ``%%`` cells (``%%bash``, ...)
are left alone, and reported (TP990) when they mention CUDA.

In the file only the ``"source"`` values of changed cells are replaced, in the
layout the file already has (indentation, ASCII escapes; ``notebook_json``):
metadata, outputs, key order and the trailing newline stay byte for byte.
"""

from __future__ import annotations

import ast
import bisect
import json
import re
import secrets
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from codemod.rewrite import grammar
from codemod.rewrite.linediff import unified_diff
from codemod.run.job import DIFF, WRITE, FileResult, Job
from codemod.run.limits import nesting_problem, statement_problem
from codemod.run.notebook_json import (
    DuplicateKeyError,
    source_spans,
    unique_keys,
    with_sources,
)
from codemod.run.prefilter import PREFILTER
from codemod.model.rule import Fix
from codemod.rules.notebook import SKIPPED_CELL
from codemod.model.text import one_line as _one_line

# Lines IPython rewrites before Python sees them.
_MAGIC_LINE = re.compile(
    r"""^[ \t]*(?:[%!?]|[\w.,\[\] \t]+=[ \t]*[%!])  # %magic, !shell, ?obj, x = !cmd
    | ^[^#'"]*\?\??[ \t]*$                           # obj? and obj??
    """,
    re.VERBOSE,
)


_BARE_NEWLINE = re.compile(r"(?<!\r)\n")  # in a cell whose every line ends "\r\n"

# Cell magics whose body is Python that IPython runs: the body is rewritten.
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun"}


@dataclass
class _Cell:
    index: int  # position in the notebook's "cells" list (0-based)
    text: str  # the source, joined
    masked: str = ""  # the text with IPython lines masked, ending in a newline
    masks: Dict[str, str] = field(default_factory=dict)  # placeholder -> original line
    magic: Optional[str] = None  # "time" for a %%time cell


def process_notebook(
    display: str, data: bytes, job: Job, path: Optional[Path]
) -> FileResult:
    """Rewrite the code cells of the notebook ``data``; never touches the disk."""
    result = FileResult(display)
    try:
        text = data.decode("utf-8-sig")
        notebook = json.loads(text, object_pairs_hook=unique_keys)
        spans = list(source_spans(text))
    except DuplicateKeyError as error:  # readers differ on which one counts
        result.error = (
            f"{display}: cannot parse: {error} (JSON readers differ on which one"
            " counts; Jupyter takes the last); notebook left untouched"
        )
        return result
    except (UnicodeDecodeError, ValueError, IndexError, TypeError) as error:
        result.error = (
            f"{display}: cannot parse: not a JSON notebook ({_one_line(error)})"
        )
        return result
    except RecursionError:
        result.error = f"{display}: cannot parse: JSON nested too deep"
        return result
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list) or len(spans) != len(cells):
        result.error = f"{display}: cannot parse: not an nbformat 4 notebook"
        return result
    if not _is_python(notebook):
        return result
    code_cells, errors, skipped = _code_cells(cells)
    skipped = [d.at(display) for d in skipped if job.options.selection.enabled(d.code)]
    if errors:  # the cells share one namespace: rewrite all of them or none
        result.error = (
            "; ".join(f"{display}: {e}" for e in errors) + "; notebook left untouched"
        )
        result.diagnostics = skipped
        return result
    if not code_cells:
        result.diagnostics = skipped
        return result

    from codemod.rewrite.pipeline import ParseError, RewriteError, rewrite_source

    token = _token(text)
    combined = "".join(
        f"{_marker(token, n)}\n{cell.masked}" for n, cell in enumerate(code_cells)
    )
    from codemod.rewrite.formatting import layout_for, project_line_length

    layout = layout_for(path) if job.format else None
    options = replace(job.options, line_length=project_line_length(path, layout))
    positions = "output" if job.mode == WRITE else "input"
    failures = {
        ParseError: "cannot parse: {}",
        RewriteError: "internal error: {}; file left untouched",
        RecursionError: "cannot parse: nesting too deep",
    }
    try:
        rewrite = rewrite_source(
            combined, options, format_mode=layout, positions=positions
        )
        new_texts = _split(rewrite.code, token, code_cells)
    except tuple(failures) as error:
        why = next(v for k, v in failures.items() if isinstance(error, k))
        result.error = f"{display}: {why.format(_one_line(error))}"
        return result

    located = rewrite.code if positions == "output" else combined
    starts = _marker_lines(located, token)
    result.diagnostics = [
        _in_cell(d, display, starts, code_cells) for d in rewrite.diagnostics
    ]
    if skipped:
        result.diagnostics = sorted(
            result.diagnostics + skipped, key=lambda d: (d.cell, d.line, d.col)
        )
    changed = {
        cell.index: new for cell, new in zip(code_cells, new_texts) if new != cell.text
    }
    if not changed:
        return result
    new_text = with_sources(text, spans, changed)
    result.changed = True
    bom = "\ufeff" if text != data.decode("utf-8") else ""
    result.output = (bom + new_text).encode("utf-8")
    if job.mode == DIFF:
        result.diff = unified_diff(display, text, new_text)
    return result


# -- cells ------------------------------------------------------------------------------
def _is_python(notebook: dict) -> bool:
    """The notebook's language is Python, or not said (malformed metadata: not said)."""
    metadata = _table(notebook.get("metadata"))
    language = _table(metadata.get("kernelspec")).get("language") or _table(
        metadata.get("language_info")
    ).get("name")
    return language is None or str(language).lower() == "python"


def _table(value) -> dict:
    return value if isinstance(value, dict) else {}


def _cell_magic(text: str) -> Optional[str]:
    """``time`` for a cell that starts with ``%%time``; None for a plain cell."""
    stripped = text.lstrip()
    if not stripped.startswith("%%"):
        return None
    return (stripped[2:].split(None, 1) or [""])[0]


def _code_cells(cells: list):
    """The cells torchport rewrites, masked; 'cell N: why' for the ones it cannot
    parse; and a TP990 diagnostic for each skipped cell magic that mentions CUDA."""
    from codemod.model.diagnostic import Diagnostic

    found: List[_Cell] = []
    errors: List[str] = []
    skipped: List[Diagnostic] = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            text = "".join(source)
        elif isinstance(source, str):
            text = source
        else:
            errors.append(f"cell {index + 1}: source is not text")
            continue
        if not text.strip():
            continue
        magic = _cell_magic(text)
        if magic is not None and magic not in PYTHON_CELL_MAGICS:
            # Not Python: left alone, and reported if it may pick CUDA.
            if PREFILTER.matches(text.encode("utf-8", "replace")) and not re.search(
                r"#\s*noqa(?!:)|#\s*noqa:[^\n]*\bTP990\b", text
            ):
                first = text.lstrip().split("\n", 1)[0]
                skipped.append(
                    Diagnostic(
                        "",
                        1,
                        1,
                        SKIPPED_CELL.code,
                        SKIPPED_CELL.name,
                        SKIPPED_CELL.message.format(magic=magic),
                        Fix.NONE.value,
                        cell=index + 1,
                        end_col=len(first) + 1,
                        severity=SKIPPED_CELL.severity,
                    )
                )
            continue
        problem = nesting_problem(text)  # before a parser recurses
        if problem is not None:
            errors.append(f"cell {index + 1}: cannot parse: {problem}")
            continue
        masked, masks = _mask(text)
        try:
            grammar.parse(masked)
        except (SyntaxError, ValueError) as error:
            errors.append(f"cell {index + 1}: cannot parse: {_one_line(error)}")
            continue
        except (RecursionError, MemoryError):
            errors.append(f"cell {index + 1}: cannot parse: nesting too deep")
            continue
        problem = statement_problem(masked)
        if problem is not None:
            errors.append(f"cell {index + 1}: cannot rewrite: {problem}")
            continue
        found.append(_Cell(index, text, masked, masks, magic))
    return found, errors, skipped


def _mask(text: str) -> Tuple[str, Dict[str, str]]:
    """``text`` ending in a newline, with IPython-only lines replaced by ``pass``."""
    masks: Dict[str, str] = {}
    try:
        ast.parse(text)
        lines = None  # plain Python: nothing to mask
    except (SyntaxError, ValueError):
        lines = text.split("\n")
    if lines is not None:
        token = _token(text)
        continued: Optional[str] = None  # the indent of a magic line ending in "\\"
        for number, line in enumerate(lines):
            if continued is None and not _MAGIC_LINE.match(line):
                continue
            # `!pip install \` goes on over the next lines, however indented.
            indent = (
                line[: len(line) - len(line.lstrip())]
                if continued is None
                else continued
            )
            placeholder = f"pass  # torchport-ipython-{token}-{number}"
            masks[placeholder] = line
            lines[number] = indent + placeholder
            continued = indent if line.rstrip().endswith("\\") else None
        text = "\n".join(lines)
    return (text if text.endswith("\n") else text + "\n"), masks


def _unmask(text: str, cell: _Cell) -> str:
    if not cell.masks:
        return text
    lines = text.split("\n")
    restored = 0
    for number, line in enumerate(lines):
        original = cell.masks.get(line.strip())
        if original is not None:
            lines[number] = original
            restored += 1
    if restored != len(cell.masks):
        from codemod.rewrite.pipeline import RewriteError

        raise RewriteError(
            f"cell {cell.index + 1}: an IPython line was lost in the rewrite"
        )
    return "\n".join(lines)


# -- joining and splitting --------------------------------------------------------------
def _token(text: str) -> str:
    while True:
        token = secrets.token_hex(6)
        if token not in text:
            return token


def _marker(token: str, number: int) -> str:
    return f"# torchport-cell-{token} {number}"


def _marker_lines(code: str, token: str) -> List[int]:
    """1-based line of each cell marker in ``code``."""
    prefix = f"# torchport-cell-{token} "
    return [
        n for n, line in enumerate(code.split("\n"), start=1) if line.startswith(prefix)
    ]


def _split(code: str, token: str, cells: List[_Cell]) -> List[str]:
    """The rewritten text of each cell, in the cell's own trailing-newline form."""
    parts = re.split(rf"^# torchport-cell-{token} (\d+)\n", code, flags=re.MULTILINE)
    head, numbered = parts[0], parts[1:]
    numbers = [int(n) for n in numbered[0::2]]
    if numbers != list(range(len(cells))):
        from codemod.rewrite.pipeline import RewriteError

        raise RewriteError("the cell boundaries did not survive the rewrite")
    texts = list(numbered[1::2])
    texts[0] = head + texts[0]  # an import added above the first marker
    out = []
    for cell, new in zip(cells, texts):
        new = _unmask(new, cell)
        if cell.magic is not None:  # a cell magic must stay the cell's first line
            first = cell.text.lstrip().split("\n", 1)[0]
            lines = new.split("\n")
            if lines[0].strip() != first.strip() and first in lines:
                lines.remove(first)
                new = "\n".join([first, *lines])
        # The cell ends as it did: with its own run of newlines, or none.
        ending = cell.text[len(cell.text.rstrip("\n")) :]
        new = new.rstrip("\n") + ending
        if "\n" in cell.text and cell.text.count("\n") == cell.text.count("\r\n"):
            new = _BARE_NEWLINE.sub("\r\n", new)  # the lines torchport wrote, too
        out.append(new)
    return out


def _in_cell(diagnostic, display: str, starts: List[int], cells: List[_Cell]):
    """A diagnostic of the joined module, pointed at its cell (1-based cell numbers);
    ``starts`` ascend, so its cell is found by bisection, not a scan of all cells."""
    n = max(bisect.bisect_left(starts, diagnostic.line) - 1, 0)  # last start before
    line = diagnostic.line - starts[n]
    if n == 0 and starts[0] > 1:  # lines added above the first marker open cell 1
        line = diagnostic.line - 1 if diagnostic.line > starts[0] else diagnostic.line
    return replace(diagnostic, path=display, line=line, cell=cells[n].index + 1)
