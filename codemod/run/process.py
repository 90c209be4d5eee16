"""One file: its bytes rewritten (``process_source``), or the file read, rewritten
and written back (``process_file``), with every failure turned into one error line.

What a worker runs for each file it is given; apart from the pool so that stdin
mode and the tests process one file without a pool.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Optional

from codemod.model.text import one_line
from codemod.run.io import (
    FileChangedError,
    NotRegularError,
    ReadOnlyError,
    decode,
    os_reason,
    read_problem,
    read_regular,
    write_atomic,
)
from codemod.run.keep import MetadataError
from codemod.run.pinned import Folder, LinkOnTheWay
from codemod.run.job import CHECK, DIFF, WRITE, FileResult, Job
from codemod.run.limits import nesting_problem, statement_problem
from codemod.run.prefilter import needs_parsing


def process_source(
    display: str, data: bytes, job: Job, path: Optional[Path] = None
) -> FileResult:
    """Rewrite the bytes of one file; never touches the disk.

    Whatever goes wrong with one file ends up in ``result.error`` (one line, starting
    with the file name); nothing here raises for a bad file.
    """
    try:
        return _process_source(display, data, job, path)
    except RecursionError:
        return FileResult(display, error=f"{display}: cannot parse: nesting too deep")
    except MemoryError:  # CPython's parser on deep nesting it has no limit for
        return FileResult(display, error=f"{display}: {OUT_OF_MEMORY}")
    except Exception as error:  # a bug in torchport must cost one file, not the run
        return FileResult(display, error=_internal_error(display, error))


OUT_OF_MEMORY = "cannot parse: nested too deep or too large (out of memory)"


def too_much(source: str) -> Optional[str]:
    """Why ``source`` exceeds the bounds in ``limits``, if it does (the end of an
    error line)."""
    problem = nesting_problem(source)
    if problem is not None:
        return f"cannot parse: {problem}"
    problem = statement_problem(source)
    return None if problem is None else f"cannot rewrite: {problem}"


def _internal_error(display: str, error: BaseException) -> str:
    return (
        f"{display}: internal error: {type(error).__name__}: {one_line(error)};"
        " file left untouched"
    )


def _process_source(
    display: str, data: bytes, job: Job, path: Optional[Path]
) -> FileResult:
    result = FileResult(display)
    if not needs_parsing(data):
        return result
    if display.endswith(".ipynb"):
        from codemod.run.notebook import process_notebook

        return process_notebook(display, data, job, path)
    try:
        source, encoding = decode(data)
    except UnicodeError as error:
        result.error = f"{display}: cannot decode: {error}"
        return result
    problem = too_much(source)
    if problem is not None:  # before any parser recurses or grows without bound
        result.error = f"{display}: {problem}"
        return result
    import libcst as cst

    from codemod.rewrite.pipeline import RewriteError, RoundTripError, rewrite_source
    from codemod.rewrite.formatting import BlackConfigError

    try:
        from codemod.run import black_helper
        from codemod.rewrite.formatting import layout_for, project_line_length

        layout = layout_for(path) if job.format else None
        if layout is not None:  # black in the run's helper, where ``run`` made one
            layout = replace(layout, helper=black_helper.running)
        options = replace(job.options, line_length=project_line_length(path, layout))
        rewrite = rewrite_source(
            source,
            options,
            format_mode=layout,
            positions="output" if job.mode == WRITE else "input",
        )
        output = rewrite.code.encode(encoding) if rewrite.changed else None
    except (cst.ParserSyntaxError, SyntaxError) as error:
        result.error = f"{display}: cannot parse: {_syntax_message(source, error)}"
        return result
    except RecursionError:
        result.error = f"{display}: cannot parse: nesting too deep"
        return result
    except MemoryError:
        result.error = f"{display}: {OUT_OF_MEMORY}"
        return result
    except RoundTripError as error:
        result.error = f"{display}: cannot rewrite: {error}; file left untouched"
        return result
    except BlackConfigError as error:  # a pyproject.toml other than the first's
        result.error = f"{display}: {error}"
        return result
    except RewriteError as error:
        result.error = f"{display}: internal error: {error}; file left untouched"
        return result
    result.diagnostics = [d.at(display) for d in rewrite.diagnostics]
    if rewrite.changed:
        result.changed = True
        result.output = output
        result.adds_accessor = rewrite.adds_accessor
        if job.mode == DIFF:
            from codemod.rewrite.linediff import unified_diff

            result.diff = unified_diff(display, source, rewrite.code)
    return result


# CPython's messages for code that is Python 2.
_PYTHON2 = re.compile(
    r"Missing parentheses in call to|leading zeros in decimal integer literals"
)


def _syntax_message(source: str, error: Exception) -> str:
    """CPython's own message (clearer than the parser's), with the line, and the
    grammars that fail: the interpreter's, and libcst's (which knows newer ones)."""
    from codemod.rewrite.grammar import INTERPRETER, GrammarError, missing_grammar

    grammars = ""
    if not isinstance(error, GrammarError):
        try:
            compile(
                source, "<file>", "exec", dont_inherit=True, flags=0x400
            )  # PyCF_ONLY_AST
        except SyntaxError as python_error:
            error = python_error
            newer = missing_grammar(error.msg or "")
            grammars = (
                f" ({newer}; Python {INTERPRETER} does not read it, and libcst's"
                " parser fails on this file too)"
                if newer is not None
                else f" (Python {INTERPRETER} grammar; libcst's parser fails too)"
            )
        except (ValueError, RecursionError, MemoryError):
            pass
    if isinstance(error, SyntaxError):
        where = f"line {error.lineno}: " if error.lineno else ""
        text = f"{where}{error.msg}"
        if _PYTHON2.search(error.msg or ""):
            return text + " (Python 2 code is not supported)"
        return text + grammars
    return one_line(error)


def process_file(path: Path, job: Job) -> FileResult:
    """Read, rewrite and (in write mode) atomically replace one file."""
    display = str(path)
    try:
        return _process_file(path, display, job)
    except Exception as error:  # a bug in torchport must cost one file, not the run
        return FileResult(display, error=_internal_error(display, error))


def _process_file(path: Path, display: str, job: Job) -> FileResult:
    if job.per_file is not None:
        job = replace(job, options=job.per_file(path))
    if job.patched and str(path) in job.patched:
        options = replace(job.options, patched_elsewhere=job.patched[str(path)])
        job = replace(job, options=options)
    if job.tied:
        job = replace(job, options=replace(job.options, tied_classes=job.tied))
    if job.star and str(path) in job.star:
        options = replace(job.options, star_exports=job.star[str(path)])
        job = replace(job, options=options)
    try:
        folder = Folder(path)  # pinned from read to rename: no link on the way
    except (OSError, LinkOnTheWay) as error:
        return FileResult(display, error=f"{display}: {read_problem(error)}")
    with folder:
        try:
            data, before = read_regular(folder.entry(folder.name), **folder.at())
        except (OSError, NotRegularError) as error:
            return FileResult(display, error=f"{display}: {read_problem(error)}")
        result = process_source(display, data, job, path)
        if result.changed and job.mode == WRITE and result.error is None:
            result.error = _write(path, display, result.output, data, before, folder)
            result.written = result.error is None
            if not result.written:  # every site is left, where it is in the file
                check = process_source(display, data, replace(job, mode=CHECK), path)
                left = [replace(d, applied=False) for d in check.diagnostics]
                result.diagnostics = left
    result.output = None  # do not ship file contents back to the parent
    return result


def _write(path, display, output, data, before, folder) -> Optional[str]:
    """Write ``output`` over the file; the error line, or None once written."""
    try:
        write_atomic(path, output, data, before, folder)
    except FileChangedError as error:
        what = str(error) or "changed while torchport was running"
        return f"{display}: {what}; not written"
    except ReadOnlyError as error:
        return f"{display}: read-only {error}; not written"
    except MetadataError as error:
        return f"{display}: {error}; not written"
    except OSError as error:
        return f"{display}: cannot write: {os_reason(error)}"
    return None
