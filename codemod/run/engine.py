"""Find files, skip those that cannot need a rewrite, rewrite the rest in parallel,
and write each changed file atomically with its encoding, line endings and mode.

Nothing here imports libcst until a file actually needs parsing: a tree without
CUDA code costs a walk and a byte search.
"""

from __future__ import annotations

import codecs
import errno
import io
import os
import re
import signal
import stat
import sys
import time
import tokenize

try:
    import fcntl
except ImportError:  # Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, List, Optional, Sequence, Tuple

from codemod import catalog
from codemod.run.results import CHECK, DIFF, WRITE, FileResult, Job, Mode  # noqa: F401
from codemod.model.text import one_line as _one_line

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

# Whatever any pass TRIGGER matches, as bytes: derived from the catalogue.
PREFILTER = catalog.prefilter()

SKIPPED_DIRS = {
    ".git",
    ".hg",
    ".svn",
    ".tox",
    ".nox",
    ".venv",
    "venv",
    "__pycache__",
    "build",
    "dist",
    "node_modules",
    ".eggs",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "site-packages",
}


# -- discovery ----------------------------------------------------------------------
IGNORE_FILE_LIMIT = 1 << 20  # bytes of a .gitignore read; more is not an ignore file


def _gitignore_specs(directory: Path):
    """The .gitignore specs that apply inside ``directory``, from the repo root down."""
    chain = [directory, *directory.parents]
    root = next((i for i, d in enumerate(chain) if _exists(d / ".git")), None)
    chain = chain[: root + 1] if root is not None else [directory]
    specs = []
    for base in reversed(chain):
        spec = _load_gitignore(base)
        if spec is not None:
            specs.append((base, spec))
    return specs


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # a folder torchport may not look into
        return False


def _load_gitignore(base: Path):
    """The spec of ``base/.gitignore``, read only if it is a regular file (a named
    pipe would block, a link to /dev/zero would never end), up to a size cap."""
    try:
        data, _ = read_regular(base / ".gitignore", follow=True)
    except (OSError, NotRegularError):
        return None
    import pathspec  # only where there is a .gitignore

    text = data[:IGNORE_FILE_LIMIT].decode("utf-8", errors="replace")
    return pathspec.GitIgnoreSpec.from_lines(text.splitlines())


def _ignored(path: Path, is_dir: bool, specs) -> bool:
    for base, spec in specs:
        try:
            relative = path.relative_to(base).as_posix()
        except ValueError:
            continue
        if spec.match_file(relative + "/" if is_dir else relative):
            return True
    return False


def _is_virtualenv(directory: Path) -> bool:
    try:
        return (directory / "pyvenv.cfg").is_file()
    except OSError:  # unreadable: the walk reports it when it gets there
        return False


def discover(
    paths: Sequence[str], exclude=None, extensions: Tuple[str, ...] = (".py",)
) -> Tuple[List[Path], List[str]]:
    """Files to process, in a stable order, and error lines for bad paths.

    Folders are walked for ``extensions``, without following symbolic links,
    skipping VCS and virtualenv folders, build output and what .gitignore ignores.
    A file named explicitly is always taken; when it is a symbolic link, its target
    must lie inside the current folder or a folder named, and the target is what is
    processed. ``exclude(path, is_dir)`` filters more.
    """
    files: List[Path] = []
    errors: List[str] = []
    seen = set()
    roots = [os.path.realpath(".")]
    roots += [os.path.realpath(raw) for raw in paths if os.path.isdir(raw)]

    def add(path: Path, key: Optional[str] = None) -> None:
        key = key or os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            files.append(path)

    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for found, real in _walk(path, exclude, extensions, errors):
                add(found, real)
        elif path.is_file() and not path.is_symlink():
            add(path)
        elif path.is_file():
            target = os.path.realpath(path)
            if not any(_inside(target, root) for root in roots):
                errors.append(
                    f"{raw}: symbolic link to {target}, outside the paths given;"
                    " not followed"
                )
            else:
                add(
                    Path(
                        os.path.relpath(target) if _inside(target, roots[0]) else target
                    )
                )
        else:
            errors.append(f"{raw}: {_not_a_file(raw)}")
    return files, errors


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


_FILE_KINDS = {
    stat.S_IFIFO: "a named pipe",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def _not_a_file(raw: str) -> str:
    """Why ``raw``, neither a folder nor a regular file, cannot be processed."""
    link = os.path.islink(raw)
    try:
        mode = os.stat(raw).st_mode
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "symbolic link loop"
        if error.errno == errno.ENOENT:
            return "broken symbolic link" if link else "no such file or directory"
        return f"cannot read: {_os_reason(error)}"
    kind = _FILE_KINDS.get(stat.S_IFMT(mode), "something else")
    return f"not a regular file ({'symbolic link to ' if link else ''}{kind})"


def _walk(
    root: Path, exclude, extensions, errors: List[str]
) -> Iterator[Tuple[Path, str]]:
    """Each file found, and its real path (no link is followed on the way)."""
    specs = _gitignore_specs(root.resolve())
    root_resolved = root.resolve()

    def unreadable(error: OSError) -> None:
        errors.append(f"{error.filename}: cannot read folder: {_os_reason(error)}")

    for directory, subdirs, names in os.walk(
        root, followlinks=False, onerror=unreadable
    ):
        here = Path(directory)
        resolved_here = root_resolved / here.relative_to(root)
        local = _load_gitignore(resolved_here) if here != root else None
        if local is not None:
            specs = specs + [(resolved_here, local)]
        kept = []
        for name in sorted(subdirs):
            child = here / name
            if name in SKIPPED_DIRS or name.endswith(".egg-info"):
                continue
            if child.is_symlink() or _is_virtualenv(child):
                continue
            if _ignored(resolved_here / name, True, specs):
                continue
            if exclude is not None and exclude(child, True):
                continue
            kept.append(name)
        subdirs[:] = kept
        for name in sorted(names):
            if not name.endswith(extensions):
                continue
            child = here / name
            if child.is_symlink() or not child.is_file():
                continue
            if _ignored(resolved_here / name, False, specs):
                continue
            if exclude is not None and exclude(child, False):
                continue
            yield child, str(resolved_here / name)


# -- one file ---------------------------------------------------------------------------
# `# torchport: skip-file` on a line of its own (in a notebook, at the start of a
# JSON source string) leaves the whole file alone.
SKIP_FILE = re.compile(rb'^[ \t]*"?#[ \t]*torchport:[ \t]*skip-file\b', re.MULTILINE)


def needs_parsing(data: bytes) -> bool:
    mentions = PREFILTER.matches(data)
    if not mentions and b"\x00" in data:  # UTF-16 or UTF-32 text: say it cannot be read
        mentions = PREFILTER.matches(data.replace(b"\x00", b""))
    return mentions and SKIP_FILE.search(data) is None


_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


def _wide_encoding(data: bytes) -> Optional[str]:
    """ "UTF-16" or "UTF-32" for text in those encodings (by BOM, or by a NUL byte in
    every other position), else None."""
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            return name
    sample = data[:4096]
    if len(sample) >= 4 and sample.count(0) * 2 >= len(sample) - 1:
        if not sample[0::2].strip(b"\x00") or not sample[1::2].strip(b"\x00"):
            return "UTF-16 or UTF-32"
    return None


def decode(data: bytes) -> Tuple[str, str]:
    """Text and encoding of a Python source file (PEP 263 cookie and BOM honoured).

    Raises ``UnicodeError`` (with a one-line reason) when the bytes are not text in
    the declared encoding, or would not encode back to exactly the same bytes.
    """
    wide = _wide_encoding(data)
    if wide is not None:
        raise UnicodeError(
            f"{wide} text (Python reads source files as UTF-8 or an ASCII-based"
            " encoding declared on line 1 or 2)"
        )
    if b"\x00" in data:
        raise UnicodeError("binary file (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise UnicodeError(_one_line(error)) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        byte = data[error.start : error.start + 1].hex()
        if encoding == "utf-8":
            reason = f"not valid UTF-8 (byte 0x{byte} on line {line})"
            reason += " and no PEP 263 coding declaration"
        else:
            reason = f"not valid {encoding}, as declared (byte 0x{byte} on line {line})"
        raise UnicodeError(reason) from None
    except LookupError:  # rot13, hex, base64, zlib...: codecs, not text encodings
        raise UnicodeError(f"{encoding!r} is not a text encoding") from None
    try:
        same = text.encode(encoding) == data
    except (UnicodeError, LookupError):
        same = False
    if not same:
        raise UnicodeError(f"{encoding} text does not encode back to the same bytes")
    return text, encoding


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
    except Exception as error:  # a bug in torchport must cost one file, not the run
        return FileResult(display, error=_internal_error(display, error))


def _internal_error(display: str, error: BaseException) -> str:
    return (
        f"{display}: internal error: {type(error).__name__}: {_one_line(error)};"
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
        if job.mode == DIFF:
            from codemod.rewrite.linediff import unified_diff

            result.diff = unified_diff(display, source, rewrite.code)
    return result


# CPython's messages for code that is Python 2.
_PYTHON2 = re.compile(
    r"Missing parentheses in call to|multiple exception types must be parenthesized"
    r"|leading zeros in decimal integer literals"
)


def _syntax_message(source: str, error: Exception) -> str:
    """CPython's own message (clearer than the parser's), with the line, and the
    grammars that fail: the interpreter's, and libcst's (which knows newer ones)."""
    from codemod.rewrite.grammar import INTERPRETER, GrammarError

    grammars = ""
    if not isinstance(error, GrammarError):
        try:
            compile(
                source, "<file>", "exec", dont_inherit=True, flags=0x400
            )  # PyCF_ONLY_AST
        except SyntaxError as python_error:
            error = python_error
            grammars = f" (Python {INTERPRETER} grammar; libcst's parser fails too)"
        except (ValueError, RecursionError, MemoryError):
            pass
    if isinstance(error, SyntaxError):
        where = f"line {error.lineno}: " if error.lineno else ""
        text = f"{where}{error.msg}"
        if _PYTHON2.search(error.msg or ""):
            return text + " (Python 2 code is not supported)"
        return text + grammars
    return _one_line(error)


def process_file(path: Path, job: Job) -> FileResult:
    display = str(path)
    try:
        return _process_file(path, display, job)
    except Exception as error:  # a bug in torchport must cost one file, not the run
        return FileResult(display, error=_internal_error(display, error))


def _process_file(path: Path, display: str, job: Job) -> FileResult:
    if job.per_file is not None:
        job = replace(job, options=job.per_file(path))
    try:
        data, before = read_regular(path)
    except (OSError, NotRegularError) as error:
        return FileResult(display, error=f"{display}: {_read_problem(error)}")
    result = process_source(display, data, job, path)
    if result.changed and job.mode == WRITE and result.error is None:
        try:
            write_atomic(path, result.output, data, before)
            result.written = True
        except FileChangedError:
            result.error = (
                f"{display}: changed while torchport was running; not written"
            )
        except ReadOnlyError as error:
            result.error = f"{display}: read-only {error}; not written"
        except OSError as error:
            result.error = f"{display}: cannot write: {_os_reason(error)}"
    result.output = None  # do not ship file contents back to the parent
    return result


class NotRegularError(Exception):
    """The path is no longer a regular file (swapped for a pipe, a device...)."""


# Never follow a symbolic link (one swapped in after discovery could lead out of the
# tree), never block opening a named pipe.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def read_regular(path: Path, follow: bool = False) -> Tuple[bytes, os.stat_result]:
    """The bytes of ``path`` and its stat, only if it is a regular file (not through
    a symbolic link unless ``follow``). Raises ``NotRegularError`` or ``OSError``."""
    flags = _OPEN_FLAGS & ~getattr(os, "O_NOFOLLOW", 0) if follow else _OPEN_FLAGS
    fd = os.open(path, flags)
    with open(fd, "rb", closefd=True) as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _FILE_KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise NotRegularError(kind)
        return handle.read(), info


def _read_problem(error: Exception) -> str:
    if isinstance(error, NotRegularError):
        return f"not a regular file ({error}); not read"
    if isinstance(error, OSError) and error.errno == errno.ELOOP:
        return "is a symbolic link (not followed); not read"
    return f"cannot read: {_os_reason(error)}"


def _os_reason(error: OSError) -> str:
    return error.strerror or _one_line(error)


class FileChangedError(Exception):
    pass


class ReadOnlyError(Exception):
    """``str(error)`` says what is read-only: "file" or "folder"."""


TEMP_SUFFIX = ".torchport~"  # temporary files: ".<name>.<random>.torchport~"
TEMP_NAME_CHARS = 40  # of the file's name in the temporary name (names max 255 bytes)
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
_WRITE_BITS = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


def _identity(info: os.stat_result) -> Tuple[int, int, int, int]:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def write_atomic(
    path: Path, data: bytes, original: bytes, before: os.stat_result
) -> None:
    """Replace ``path`` with ``data`` atomically, keeping mode and owner.

    The new bytes go to a temporary file beside the original, are flushed to disk,
    then renamed over it. Right before the rename the file must still be the one
    read (same device, inode, size, mtime and bytes, not a symbolic link), else it
    is not replaced (``FileChangedError``); an advisory lock on it keeps two
    torchport runs from both replacing it. A read-only file or folder (no write
    bit) is never written, even by root.
    SIGINT and SIGTERM wait until the temporary file is renamed or removed; after
    SIGKILL a ``.<name>.XXXX.torchport~`` file may be left, never a ``.py``.
    """
    if not before.st_mode & _WRITE_BITS:
        raise ReadOnlyError("file")
    folder = os.path.dirname(path) or "."
    if not os.stat(folder).st_mode & _WRITE_BITS:
        raise ReadOnlyError("folder")
    blocked = _block(_STOP_SIGNALS)
    try:
        import tempfile  # only when a file is written

        fd, temp = tempfile.mkstemp(
            prefix=f".{path.name[:TEMP_NAME_CHARS]}.", suffix=TEMP_SUFFIX, dir=folder
        )
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temp, stat.S_IMODE(before.st_mode))
            if hasattr(os, "chown") and os.geteuid() == 0:
                try:
                    os.chown(temp, before.st_uid, before.st_gid)
                except OSError:
                    pass
            _replace_if_unchanged(temp, path, original, before)
        except BaseException:
            try:
                os.unlink(temp)
            except OSError:
                pass
            raise
    finally:
        _unblock(blocked)


def _replace_if_unchanged(
    temp: str, path: Path, original: bytes, before: os.stat_result
) -> None:
    """Rename ``temp`` over ``path`` if ``path`` is still what was read.

    What remains is the time between the last ``lstat`` and the rename (a few
    microseconds; scripts/concurrent_edits.py measures it): a write by a program
    that takes no lock landing then is lost.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:  # gone, or swapped for a symbolic link
        raise FileChangedError() from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # another torchport run is replacing it right now
                raise FileChangedError() from None
        if _identity(os.fstat(fd)) != _identity(before):
            raise FileChangedError()
        with open(fd, "rb", closefd=False) as handle:
            if handle.read() != original:
                raise FileChangedError()
        if _identity(os.lstat(path)) != _identity(before):
            raise FileChangedError()
        os.replace(temp, path)
    finally:
        os.close(fd)  # releases the lock


def _block(signals):
    """Defer ``signals`` in this thread (a no-op where that is not supported)."""
    if hasattr(signal, "pthread_sigmask"):
        return signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    return None


def _unblock(previous) -> None:
    if previous is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


# -- many files -------------------------------------------------------------------------
def _work_chunk(chunk: Sequence[Tuple[Path, Job]]) -> List[FileResult]:
    return [process_file(path, job) for path, job in chunk]


def _init_worker(parent: int) -> None:
    # Ctrl-C reaches the whole process group; the parent alone decides what to do,
    # and stops the workers with SIGTERM (deferred while one is replacing a file).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent(parent)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)


PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
PARENT_CHECK_SECONDS = 1.0  # where the kernel cannot tell: how often to look


def _die_with_parent(parent: int) -> None:
    """A worker whose parent is killed (SIGKILL: no chance to stop its workers)
    gets SIGTERM too, so that nothing holds the parent's stdout open forever.

    Linux sends it (PR_SET_PDEATHSIG); elsewhere a thread checks the parent's pid.
    """
    if not _kernel_signals_parent_death():
        import threading

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(PARENT_CHECK_SECONDS)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=watch, daemon=True).start()
    if os.getppid() != parent:  # it died before the kernel was asked to tell
        os.kill(os.getpid(), signal.SIGTERM)


def _kernel_signals_parent_death() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _stop_workers(pool: "ProcessPoolExecutor") -> None:
    """Terminate the workers now, without waiting for the files queued for them."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14+
    if terminate is not None:
        terminate()
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(5)
        if process.is_alive():
            process.kill()
    pool.shutdown(wait=False)


def run(
    files: Sequence[Path], job: Job, jobs: Optional[int] = None, progress=None
) -> List[FileResult]:
    """Process ``files``; results come back in the order of ``files``.

    Files whose bytes cannot need a rewrite are settled here without a worker.
    An interrupt (KeyboardInterrupt, SystemExit) stops the workers before it
    propagates; a file is then either untouched or completely rewritten.
    """
    results: List[Optional[FileResult]] = [None] * len(files)
    todo: List[int] = []
    for index, path in enumerate(files):
        try:
            data, _ = read_regular(path)
        except (OSError, NotRegularError) as error:
            results[index] = FileResult(
                str(path), error=f"{path}: {_read_problem(error)}"
            )
            continue
        if needs_parsing(data):
            todo.append(index)
        else:
            results[index] = FileResult(str(path))
            if progress:
                progress(1)
    workers = min(jobs or os.cpu_count() or 1, len(todo))
    if workers <= 1:
        with _black_helper(job, todo):
            for index in todo:
                results[index] = process_file(files[index], job)
                if progress:
                    progress(1)
    else:
        _run_pool(files, todo, job, workers, results, progress)
    return [r for r in results if r is not None]


def _black_helper(job: Job, todo: Sequence[int]):
    """Where this process rewrites files itself: black imported in a helper process
    meanwhile (``codemod.run.black_helper``), unless nothing is laid out with black."""
    if not job.format or not todo or "libcst" in sys.modules:
        import contextlib

        return contextlib.nullcontext()
    from codemod.run import black_helper

    return black_helper.started()


def _run_pool(files, todo, job, workers, results, progress) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor  # only with workers
    from concurrent.futures.process import BrokenProcessPool

    import codemod.rewrite.pipeline  # noqa: F401  (imported once, inherited by the workers)

    context = multiprocessing.get_context("fork")
    # A worker is forked with the parent's handlers: Ctrl-C or SIGTERM before its
    # own are set would print a traceback from it. Workers start with the two
    # blocked (the parent's are deferred until they are started) and unblock them
    # once their handlers are set.
    blocked = _block(_STOP_SIGNALS)
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_init_worker,
        initargs=(os.getpid(),),
    )
    try:
        size = max(1, min(8, len(todo) // (workers * 4)))
        chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
        # Futures, not pool.map: map cancels its futures when interrupted, and the
        # executor then trips over them while its workers are being stopped.
        try:
            futures = [
                pool.submit(_work_chunk, [(files[i], job) for i in chunk])
                for chunk in chunks
            ]
        finally:
            _unblock(blocked)
        for chunk, future in zip(chunks, futures):
            for index, result in zip(chunk, future.result()):
                results[index] = result
                if progress:
                    progress(1)
    except BrokenProcessPool:
        # A worker died (killed, out of memory): what it had not reported is unknown,
        # and the files it was given were left untouched or rewritten whole.
        for index in todo:
            if results[index] is None:
                path = files[index]
                results[index] = FileResult(
                    str(path),
                    error=f"{path}: a worker process died; the file is untouched or fully rewritten",
                )
        _stop_workers(pool)
    except BaseException:
        _stop_workers(pool)
        raise
    else:
        pool.shutdown(wait=True)
