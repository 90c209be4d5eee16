#!/usr/bin/env python
"""Run torchport on a *copy* of real projects and check the contract of a rewrite.

Usage::

    python scripts/realcode_check.py FOLDER [FOLDER ...] [--torchport CMD] [--verbose]

For each FOLDER (never modified) the script copies it to a temporary directory, runs
``CMD --output-format json <copy>`` (rewrites in place), then runs it a second time and
reports one markdown table row per folder:

``files``        ``*.py`` / ``*.ipynb`` files in the folder
``cuda``         of these, files whose bytes contain ``cuda`` (any case)
``changed``      files the first run changed
``crash``        runs that exited outside 0/1/2, printed a traceback, timed out or printed
                 output that is not JSON
``errors``       error diagnostics (code not ``TPnnn``) or stderr lines saying "error" (parse
                 errors, internal errors)
``no compile``   changed ``.py`` files that compiled before and no longer ``compile()``
``non-idem``     files the second run changed again
``no-cuda chg``  changed files that mention neither ``cuda``, ``nccl`` nor the deprecated
                 ``torch.cpu.amp`` the AMP rules also rewrite (must be 0)
``cpu chg``      AMP calls of changed files that now run enabled on the CPU of a CPU-only
                 host, where the original's CUDA autocast or scaler was disabled there
                 (``scripts/cpu_host.py``: the port computes another dtype there; must be 0)
``text chg``     changed files whose comments, docstrings or non-device string literals
                 changed (device strings ``"cuda"``, ``"cuda:N"``, ``"cuda:{}"``,
                 f-strings starting ``cuda:``, ``"nccl"``, and the ``"cpu"`` of
                 ``"cuda" if ... else "cpu"`` may change)
``ws chg``       changed files where whitespace-only lines were edited or removed on their
                 own (not part of a code change): "nothing else moves"
``sites``        census sites before -> after
``diags``        diagnostics printed by the second run
``silent``       census sites left in the rewritten copy with no diagnostic of the second
                 run on the same line (and no ``# noqa`` there); must be 0.  Census kinds
                 listed in ``--portable-kinds`` (default ``dataloader-pin``) are exempt
``time``         seconds of the first run

The default command is ``torchport`` when it is on PATH, else ``<python> -m codemod`` with the
repository root put on ``PYTHONPATH``.  Nothing here imports ``codemod``: the census is
``scripts/census.py`` (stdlib ``ast``), so the checks do not share torchport's bugs.
``--args "--target-torch 2.9"`` passes extra options to both runs.
``--verbose`` lists every problem found; ``--keep`` keeps the rewritten copies.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tokenize
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from census import run_census  # noqa: E402
from cpu_host import cpu_autocasts  # noqa: E402

SKIP_DIRS = {".git", "__pycache__"}
DEVICE_LIKE = re.compile(r"^(cuda(:\d+)?|cuda:(\{[^{}]*\}|%[ds])|nccl)$")
# The docstring of the device accessor torchport defines (`def _DEVICE(): ...`): its
# own text, the one string a rewrite adds.
ACCESSOR_DOCS = {
    "The accelerator found on first use, else the CPU.",
    "The CUDA device found on first use, else the CPU.",
}
NOQA = re.compile(r"#\s*noqa\b", re.I)


@dataclass
class Row:
    name: str
    files: int = 0
    cuda_files: int = 0
    changed: int = 0
    crashes: int = 0
    parse_errors: int = 0
    no_compile: int = 0
    non_idempotent: int = 0
    nocuda_changed: int = 0
    cpu_changed: int = 0
    text_changed: int = 0
    ws_changed: int = 0
    sites_before: int = 0
    sites_after: int = 0
    diags: int = 0
    silent: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    COLUMNS = (
        "project",
        "files",
        "cuda",
        "changed",
        "crash",
        "errors",
        "no compile",
        "non-idem",
        "no-cuda chg",
        "cpu chg",
        "text chg",
        "ws chg",
        "sites",
        "diags",
        "silent",
        "time s",
    )

    def cells(self) -> list[str]:
        return [
            self.name,
            str(self.files),
            str(self.cuda_files),
            str(self.changed),
            str(self.crashes),
            str(self.parse_errors),
            str(self.no_compile),
            str(self.non_idempotent),
            str(self.nocuda_changed),
            str(self.cpu_changed),
            str(self.text_changed),
            str(self.ws_changed),
            f"{self.sites_before} -> {self.sites_after}",
            str(self.diags),
            str(self.silent),
            f"{self.seconds:.2f}",
        ]


# --------------------------------------------------------------------------------------------
# helpers


def _mentions_cuda(data: bytes) -> bool:
    """CUDA code in a file's bytes: "cuda" or the NCCL backend, in any case."""
    lowered = data.lower()
    return b"cuda" in lowered or b"nccl" in lowered


def _may_change(data: bytes) -> bool:
    """What torchport may rewrite: CUDA code, or the deprecated ``torch.cpu.amp``
    (the AMP rules rewrite it with ``torch.cuda.amp``)."""
    return _mentions_cuda(data) or b"cpu.amp" in data


def default_command() -> list[str]:
    exe = shutil.which("torchport")
    return [exe] if exe else [sys.executable, "-m", "codemod"]


def snapshot(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for f in files:
            if f.endswith((".py", ".ipynb")):
                p = Path(dirpath, f)
                if p.is_symlink():
                    continue
                out[str(p.relative_to(root))] = p.read_bytes()
    return out


def decode(data: bytes) -> str:
    return tokenize.TextIOWrapper(io.BytesIO(data)).read()


def compiles(data: bytes, name: str) -> bool:
    try:
        compile(data, name, "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError):
        return False


def comments(src: str) -> Counter:
    try:
        toks = tokenize.generate_tokens(io.StringIO(src).readline)
        return Counter(t.string for t in toks if t.type == tokenize.COMMENT)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return Counter()


def strings(src: str) -> tuple[list[str], Counter]:
    """(docstrings in order, Counter of other string literals / f-string templates)."""
    tree = ast.parse(src)
    docs, doc_ids = [], set()
    for node in ast.walk(tree):
        if isinstance(
            node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        ):
            b = node.body
            if (
                b
                and isinstance(b[0], ast.Expr)
                and isinstance(b[0].value, ast.Constant)
                and isinstance(b[0].value.value, str)
            ):
                if b[0].value.value in ACCESSOR_DOCS:
                    doc_ids.add(id(b[0].value))
                    continue
                docs.append(b[0].value.value)
                doc_ids.add(id(b[0].value))
    # The "cpu" of a device choice, ``"cuda" if ... else "cpu"``, goes with it.
    device_choices = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.IfExp):
            values = [node.body, node.orelse]
            texts = [getattr(v, "value", None) for v in values]
            if "cpu" in texts and any(
                isinstance(t, str) and DEVICE_LIKE.match(t) for t in texts
            ):
                device_choices.update(id(v) for v in values)
    inner = set()
    lits = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                inner.add(id(v))
                if isinstance(v, ast.Constant):
                    parts.append(str(v.value))
                else:
                    parts.append("{}")
                    if v.format_spec is not None:
                        inner.update(id(x) for x in ast.walk(v.format_spec))
            tmpl = "".join(parts)
            if not tmpl.startswith("cuda:"):
                lits["f:" + tmpl] += 1
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in doc_ids
            and id(node) not in device_choices
            and id(node) not in inner
            and not DEVICE_LIKE.match(node.value)
        ):
            lits[node.value] += 1
    return docs, lits


def text_changes(before: bytes, after: bytes) -> list[str]:
    """Human-readable list of comment/docstring/string-literal changes."""
    try:
        b, a = decode(before), decode(after)
        bd, bl = strings(b)
        ad, al = strings(a)
    except (SyntaxError, ValueError, UnicodeDecodeError, LookupError):
        return []
    out = []
    bc, ac = comments(b), comments(a)
    for c in (bc - ac).elements():
        out.append(f"comment removed/changed: {c!r}")
    for c in (ac - bc).elements():
        out.append(f"comment added: {c!r}")
    if bd != ad:
        out.append("docstrings changed")
    for s in (bl - al).elements():
        out.append(f"string literal changed: {s[:60]!r}")
    return out


def whitespace_edits(before: bytes, after: bytes) -> list[int]:
    """Lines (1-based, in ``before``) of whitespace-only lines that were changed or removed
    without any code change in the same diff hunk (e.g. trailing blanks stripped far from any
    rewritten site)."""
    a = before.decode("utf-8", "replace").splitlines()
    b = after.decode("utf-8", "replace").splitlines()
    out = []
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag in ("replace", "delete"):
            if all(not x.strip() for x in a[i1:i2]) and all(
                not x.strip() for x in b[j1:j2]
            ):
                out.extend(range(i1 + 1, i2 + 1))
    return out


def run_tool(cmd: list[str], target: Path, timeout: float, env: dict) -> dict:
    t0 = time.perf_counter()
    try:
        p = subprocess.run(
            [*cmd, "--output-format", "json", str(target)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=str(target.parent),
        )
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", e.stdout or "", e.stderr or ""
        out = out.decode() if isinstance(out, bytes) else out
        err = err.decode() if isinstance(err, bytes) else err
    dt = time.perf_counter() - t0
    diags, bad_json = [], False
    if out.strip():
        try:
            diags = json.loads(out)
            if not isinstance(diags, list):
                bad_json, diags = True, []
        except json.JSONDecodeError:
            # tolerate a JSON list followed/preceded by other lines
            m = re.search(r"^\[.*\]\s*$", out, re.S | re.M)
            try:
                diags = json.loads(m.group(0)) if m else []
            except json.JSONDecodeError:
                diags = []
            bad_json = True
    crash = (
        rc not in (0, 1, 2) or "Traceback (most recent call last)" in err or bad_json
    )
    return dict(
        rc=rc, out=out, err=err, seconds=dt, diags=diags, crash=crash, bad_json=bad_json
    )


def diag_key(d: dict, cwd: Path) -> tuple[str, int] | None:
    try:
        p = Path(d["filename"])
        if not p.is_absolute():
            p = cwd / p
        return (os.path.realpath(p), int(d["location"]["row"]))
    except (KeyError, TypeError, ValueError):
        return None


# --------------------------------------------------------------------------------------------


def check(
    folder: Path,
    cmd: list[str],
    timeout: float,
    verbose: bool,
    keep: bool,
    portable_kinds: frozenset = frozenset({"dataloader-pin"}),
) -> Row:
    row = Row(folder.name)
    tmp = Path(tempfile.mkdtemp(prefix=f"realcode-{folder.name}-"))
    copy = tmp / folder.name
    shutil.copytree(
        folder, copy, symlinks=True, ignore=shutil.ignore_patterns(*SKIP_DIRS)
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env.setdefault("NO_COLOR", "1")
    problems: list[str] = []
    try:
        before = snapshot(copy)
        row.files = len(before)
        row.cuda_files = sum(_mentions_cuda(v) for v in before.values())
        sites0, _ = run_census([copy])
        row.sites_before = len(sites0)

        r1 = run_tool(cmd, copy, timeout, env)
        row.seconds = r1["seconds"]
        mid = snapshot(copy)
        r2 = run_tool(cmd, copy, timeout, env)
        after = snapshot(copy)

        for i, r in enumerate((r1, r2), 1):
            if r["crash"]:
                row.crashes += 1
                tail = (r["err"].strip().splitlines() or [""])[-1]
                problems.append(
                    f"crash (run {i}): rc={r['rc']} bad_json={r['bad_json']} {tail}"
                )
        errs = [
            d for d in r1["diags"] if not re.match(r"^TP\d+$", str(d.get("code", "")))
        ]
        err_lines = [
            ln
            for ln in r1["err"].splitlines()
            if re.search(r"\berror\b", ln, re.I) and "Traceback" not in ln
        ]
        row.parse_errors = len(errs) or len(err_lines)
        problems += [f"error diagnostic: {d}" for d in errs]
        if not errs:
            problems += [f"stderr: {ln}" for ln in err_lines]

        changed = sorted(k for k in before if mid.get(k) != before[k])
        row.changed = len(changed)
        for k in changed:
            b, a = before[k], mid.get(k, b"")
            if not _may_change(b):
                row.nocuda_changed += 1
                problems.append(
                    f"{k}: changed but mentions neither CUDA, NCCL nor torch.cpu.amp"
                )
            if k.endswith(".py"):
                if compiles(b, k) and not compiles(a, k):
                    row.no_compile += 1
                    problems.append(f"{k}: no longer compiles")
                enabled = cpu_autocasts(decode(a)) - cpu_autocasts(decode(b))
                if enabled > 0:
                    row.cpu_changed += enabled
                    problems.append(
                        f"{k}: {enabled} AMP call(s) now enabled on a CPU-only host"
                    )
                ws = whitespace_edits(b, a)
                if ws:
                    row.ws_changed += 1
                    shown = ", ".join(map(str, ws[:10])) + (
                        " ..." if len(ws) > 10 else ""
                    )
                    problems.append(
                        f"{k}: {len(ws)} whitespace-only line(s) changed: {shown}"
                    )
                tc = text_changes(b, a)
                if tc:
                    row.text_changed += 1
                    problems += [f"{k}: {t}" for t in tc]
            elif k.endswith(".ipynb"):
                try:
                    json.loads(a)
                except ValueError:
                    row.no_compile += 1
                    problems.append(f"{k}: notebook is no longer valid JSON")
        again = sorted(k for k in mid if after.get(k) != mid[k])
        row.non_idempotent = len(again)
        problems += [f"{k}: changed again on the second run" for k in again]

        sites1, _ = run_census([copy])
        row.sites_after = len(sites1)
        row.diags = len(r2["diags"])
        keys = {diag_key(d, copy.parent) for d in r2["diags"]}
        line_cache: dict[str, list[str]] = {}
        for s in sites1:
            if s.kind in portable_kinds:
                continue
            rp = os.path.realpath(s.path)
            if (rp, s.line) in keys:
                continue
            lines = line_cache.setdefault(
                s.path, Path(s.path).read_text(errors="replace").splitlines()
            )
            if 0 < s.line <= len(lines) and NOQA.search(lines[s.line - 1]):
                continue
            row.silent += 1
            rel = os.path.relpath(s.path, copy)
            problems.append(f"silent: {rel}:{s.line}:{s.col}: {s.kind} {s.snippet}")
        if verbose and r1["diags"]:
            codes = Counter(str(d.get("code")) for d in r1["diags"])
            problems.append(
                "run-1 diagnostics by code: "
                + ", ".join(f"{c}={n}" for c, n in codes.most_common())
            )
    finally:
        if keep:
            problems.append(f"kept copy at {copy}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    row.notes = problems
    return row


def markdown(rows: list[Row]) -> str:
    lines = [
        "| " + " | ".join(Row.COLUMNS) + " |",
        "|" + "|".join("---" for _ in Row.COLUMNS) + "|",
    ]
    lines += ["| " + " | ".join(r.cells()) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument(
        "--torchport",
        default=None,
        help="command to run (default: torchport, else python -m codemod)",
    )
    ap.add_argument(
        "--args",
        default="",
        help='extra torchport arguments for both runs, e.g. "--target-torch 2.9"',
    )
    ap.add_argument(
        "--portable-kinds",
        default="dataloader-pin",
        help="census kinds that need no diagnostic (comma-separated; default: %(default)s)",
    )
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the rewritten copies")
    ap.add_argument("--json", action="store_true", help="print rows as JSON instead")
    args = ap.parse_args(argv)
    cmd = shlex.split(args.torchport) if args.torchport else default_command()
    cmd += shlex.split(args.args)
    rows = []
    for folder in args.folders:
        if not folder.is_dir():
            ap.error(f"not a folder: {folder}")
        kinds = frozenset(k for k in args.portable_kinds.split(",") if k)
        rows.append(
            check(folder.resolve(), cmd, args.timeout, args.verbose, args.keep, kinds)
        )
    if args.json:
        print(json.dumps([r.__dict__ for r in rows], indent=1))
    else:
        print(markdown(rows))
        if args.verbose:
            for r in rows:
                if r.notes:
                    print(f"\n### {r.name}")
                    for n in r.notes:
                        print(f"- {n}")
    bad = sum(
        r.crashes
        + r.no_compile
        + r.non_idempotent
        + r.nocuda_changed
        + r.text_changed
        + r.ws_changed
        + r.silent
        for r in rows
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
