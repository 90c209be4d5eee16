#!/usr/bin/env python
"""Time torchport against its floors on the same files, in the same run.

Usage::

    python scripts/benchmark.py FOLDER [FOLDER ...] [--repeats 3] [--torchport CMD]
                                [--nocuda-files 300] [--jobs 2] [--json]

The corpus the goals are stated on is 17 public projects (nanoGPT, pytorch/examples, timm,
whisper, minGPT, yolov5, llama, segment-anything, stable-diffusion, detectron2, fairseq,
litgpt, dinov2, diffusers' examples, denoising-diffusion-pytorch, open_clip, DiT; about 2,800
Python files).  ``scripts/fetch_corpus.py`` checks them out at pinned commits::

    python scripts/fetch_corpus.py ~/corpus
    python scripts/benchmark.py --repeats 2 $(python scripts/fetch_corpus.py ~/corpus)

For each FOLDER, every measurement below is run ``--repeats`` times, interleaved (one round of
all measurements, then the next round), and the median wall time is reported:

``grep``          ``grep -rl --include=*.py cuda FOLDER`` (the floor)
``startup``       ``python -c pass`` (interpreter start-up)
``parse x1``      a subprocess that ``libcst.parse_module``s every ``*.py`` file whose bytes
                  contain ``b"cuda"``, in one process
``parse x2``      the same with a 2-process ``multiprocessing`` pool (torchport's ``--jobs 2``)
``torchport``     ``torchport --check --jobs 2 COPY`` on a copy of FOLDER
``torchfix``      ``torchfix -j 2 COPY`` when ``torchfix`` is on PATH
``baseline``      with ``--baseline CMD``: ``CMD --check --jobs 2 COPY``, another build of
                  torchport timed the same way (``--baseline "env PYTHONPATH=../old python
                  -m codemod"`` compares a change with the revision before it)

and once per run:

``typical file``  ``torchport --check FILE`` (pre-commit-like) on the CUDA file of median size
                  among all folders' CUDA files
``largest file``  the same on the largest CUDA file of all folders
``nocuda grep``, ``nocuda torchport``  on a generated tree of ``--nocuda-files`` plain Python
                  files that never say "cuda"

Ratios printed: torchport / parse x2 (the LibCST floor), torchfix / torchport,
torchport / baseline,
nocuda torchport / (nocuda grep + startup).  Peak RSS is the largest resident set of torchport
or any of its worker processes (``getrusage(RUSAGE_CHILDREN)`` in a fresh wrapper process).

The last line is the run's summary (with ``--json``, its ``summary`` field), one line of ``key=value`` fields: the corpus figures are
sums over the folders (``torchport_s``, ``floor_s`` = parse x2, and their ratio), then the
no-CUDA ratio, the two single-file times and the largest peak RSS::

    summary: folders=17 py_files=2805 cuda_files=557 torchport_s=175.6 floor_s=31.5
    torchport/floor=5.57 nocuda_s=0.467 grep+startup_s=0.099 nocuda/(grep+startup)=4.74
    typical_file_s=0.210 largest_file_s=1.500 peak_rss_mib=84 repeats=2

(printed on one line).

The default command is ``torchport`` when on PATH, else ``<python> -m codemod`` with the
repository root on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PARSE_SCRIPT = textwrap.dedent("""
    import multiprocessing, os, sys
    import libcst

    def parse(path):
        with open(path, "rb") as f:
            data = f.read()
        try:
            libcst.parse_module(data)
            return 1
        except Exception:
            return 0

    def main(root, jobs):
        paths = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if x not in (".git", "__pycache__")]
            for f in files:
                if f.endswith(".py"):
                    p = os.path.join(d, f)
                    with open(p, "rb") as fh:
                        if b"cuda" in fh.read():
                            paths.append(p)
        if jobs > 1:
            with multiprocessing.get_context("fork").Pool(jobs) as pool:
                n = sum(pool.map(parse, paths, chunksize=1))
        else:
            n = sum(map(parse, paths))
        print(n, len(paths))

    main(sys.argv[1], int(sys.argv[2]))
    """)

RSS_WRAPPER = textwrap.dedent("""
    import resource, subprocess, sys
    rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc)
    """)


def default_command() -> list[str]:
    exe = shutil.which("torchport")
    return [exe] if exe else [sys.executable, "-m", "codemod"]


def make_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env["NO_COLOR"] = "1"
    # Measured as installed: pip writes the .pyc files of what it installs, but a
    # checkout run with PYTHONDONTWRITEBYTECODE compiles torchport's modules from
    # source at every start.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "codemod")],
        env=env,
        check=True,
    )
    return env


def timed(cmd: list[str], env: dict, timeout: float) -> tuple[float, int | str]:
    """Wall time and exit code of ``cmd``. The wait blocks until the process ends:
    ``subprocess.run(timeout=...)`` polls with sleeps of up to 50 ms, which added up
    to tens of milliseconds to runs that take a few hundred; a timer kills a run
    that exceeds ``timeout`` instead."""
    t0 = time.perf_counter()
    process = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        process.kill()

    timer = threading.Timer(timeout, expire)
    timer.start()
    try:
        rc = process.wait()
    finally:
        timer.cancel()
    elapsed = time.perf_counter() - t0
    return elapsed, ("timeout" if expired.is_set() else rc)


def peak_rss_mib(cmd: list[str], env: dict, timeout: float) -> float | None:
    try:
        p = subprocess.run(
            [sys.executable, "-c", RSS_WRAPPER, *cmd],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
        )
        return int(p.stdout.split()[0]) / 1024
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return None


def generate_nocuda_tree(root: Path, n: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    for i in range(n):
        pkg = root / f"pkg{i % 10}"
        pkg.mkdir(parents=True, exist_ok=True)
        body = [f'"""Module {i}: plain numerical helpers."""', "import math", ""]
        for j in range(rng.randint(5, 15)):
            body += [
                f"def func_{j}(x, y={j}):",
                f'    """Return a mix of x and y (helper {j})."""',
                "    total = 0",
                f"    for k in range({rng.randint(2, 20)}):",
                "        total += math.sin(x * k) + y",
                "    return total",
                "",
                "",
                f"class Thing{j}:",
                "    def __init__(self, value):",
                "        self.value = value",
                "",
                "    def scaled(self, factor=2.0):",
                "        return [self.value * factor for _ in range(3)]",
                "",
                "",
            ]
        (pkg / f"mod{i}.py").write_text("\n".join(body))


def py_files(root: Path) -> list[Path]:
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in (".git", "__pycache__")]
        out += [Path(d, f) for f in files if f.endswith(".py")]
    return out


def interleaved(measures: dict, args, env: dict) -> tuple[dict, dict]:
    """Median wall time and the exit codes of each command, over interleaved rounds."""
    times: dict[str, list[float]] = {k: [] for k in measures}
    rcs: dict[str, set] = {k: set() for k in measures}
    for _ in range(args.repeats):
        for name, c in measures.items():
            dt, rc = timed(c, env, args.timeout)
            times[name].append(dt)
            rcs[name].add(rc)
    medians = {k: statistics.median(v) for k, v in times.items()}
    return medians, {k: sorted(map(str, v)) for k, v in rcs.items()}


def with_baseline(measures: dict, args, name: str, target: str) -> dict:
    """``measures`` and, with ``--baseline``, the baseline command on ``target``."""
    if args.baseline:
        base = shlex.split(args.baseline) + shlex.split(args.args)
        measures[name] = [*base, "--check", "--jobs", str(args.jobs), target]
    return measures


def bench_folder(folder: Path, args, cmd: list[str], env: dict) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix=f"bench-{folder.name}-"))
    try:
        copy = tmp / folder.name
        shutil.copytree(
            folder, copy, symlinks=True, ignore=shutil.ignore_patterns(".git")
        )
        files = py_files(copy)
        cuda_files = [p for p in files if b"cuda" in p.read_bytes()]
        py = sys.executable
        measures: dict[str, list[str]] = {
            "grep": ["grep", "-rl", "--include=*.py", "cuda", str(copy)],
            "startup": [py, "-c", "pass"],
            "parse x1": [py, "-c", PARSE_SCRIPT, str(copy), "1"],
            "parse x2": [py, "-c", PARSE_SCRIPT, str(copy), "2"],
            "torchport": [*cmd, "--check", "--jobs", str(args.jobs), str(copy)],
        }
        torchfix = shutil.which("torchfix")
        if torchfix:
            measures["torchfix"] = [torchfix, "-j", str(args.jobs), str(copy)]
        with_baseline(measures, args, "baseline", str(copy))
        medians, rcs = interleaved(measures, args, env)
        result = {
            "folder": str(folder),
            "py_files": len(files),
            "cuda_files": len(cuda_files),
            "cuda_paths": [str(folder / p.relative_to(copy)) for p in cuda_files],
            "median_s": medians,
            "rc": rcs,
            "peak_rss_mib": peak_rss_mib(measures["torchport"], env, args.timeout),
        }
        m = result["median_s"]
        result["ratios"] = {
            "torchport/parse_x2": m["torchport"] / m["parse x2"],
            "torchport/parse_x1": m["torchport"] / m["parse x1"],
            "torchport/grep": m["torchport"] / m["grep"],
        }
        if "torchfix" in m:
            result["ratios"]["torchfix/torchport"] = m["torchfix"] / m["torchport"]
        if "baseline" in m:
            result["ratios"]["torchport/baseline"] = m["torchport"] / m["baseline"]
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench_nocuda(args, cmd: list[str], env: dict) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="bench-nocuda-"))
    try:
        generate_nocuda_tree(tmp, args.nocuda_files)
        assert not any(b"cuda" in p.read_bytes() for p in py_files(tmp))
        measures = {
            "nocuda grep": ["grep", "-rl", "--include=*.py", "cuda", str(tmp)],
            "startup": [sys.executable, "-c", "pass"],
            "nocuda torchport": [*cmd, "--check", "--jobs", str(args.jobs), str(tmp)],
        }
        with_baseline(measures, args, "nocuda baseline", str(tmp))
        m, rcs = interleaved(measures, args, env)
        return {
            "files": args.nocuda_files,
            "median_s": m,
            "rc": rcs,
            "ratios": {
                "nocuda_torchport/(grep+startup)": m["nocuda torchport"]
                / (m["nocuda grep"] + m["startup"])
            },
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench_single_files(results: list[dict], args, cmd: list[str], env: dict) -> dict:
    """``torchport --check FILE`` on the typical (median-size) and the largest CUDA file
    of all folders, each copied alone into a temporary folder."""
    paths = sorted(
        (Path(p) for r in results for p in r["cuda_paths"]),
        key=lambda p: (p.stat().st_size, str(p)),
    )
    if not paths:
        return {"files": {}, "median_s": {}, "rc": {}}
    chosen = {"typical file": paths[(len(paths) - 1) // 2], "largest file": paths[-1]}
    tmp = Path(tempfile.mkdtemp(prefix="bench-files-"))
    try:
        measures = {}
        for name, path in chosen.items():
            copy = tmp / name.split()[0] / path.name
            copy.parent.mkdir()
            shutil.copy2(path, copy)
            measures[name] = [*cmd, "--check", str(copy)]
        medians, rcs = interleaved(measures, args, env)
        files = {
            name: {"path": str(path), "bytes": path.stat().st_size}
            for name, path in chosen.items()
        }
        return {"files": files, "median_s": medians, "rc": rcs}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def summary_line(results: list[dict], nocuda: dict, single: dict, repeats: int) -> str:
    """One line with every figure the goals are stated in (``key=value``)."""
    torchport = sum(r["median_s"]["torchport"] for r in results)
    floor = sum(r["median_s"]["parse x2"] for r in results)
    m = nocuda["median_s"]
    rss = [r["peak_rss_mib"] for r in results if r["peak_rss_mib"]]
    fields = {
        "folders": str(len(results)),
        "py_files": str(sum(r["py_files"] for r in results)),
        "cuda_files": str(sum(r["cuda_files"] for r in results)),
        "torchport_s": f"{torchport:.3f}",
        "floor_s": f"{floor:.3f}",
        "torchport/floor": f"{torchport / floor:.2f}",
        "nocuda_s": f"{m['nocuda torchport']:.3f}",
        "grep+startup_s": f"{m['nocuda grep'] + m['startup']:.3f}",
        "nocuda/(grep+startup)": (
            f"{nocuda['ratios']['nocuda_torchport/(grep+startup)']:.2f}"
        ),
        "typical_file_s": _seconds(single["median_s"].get("typical file")),
        "largest_file_s": _seconds(single["median_s"].get("largest file")),
        "peak_rss_mib": f"{max(rss):.0f}" if rss else "-",
        "repeats": str(repeats),
    }
    if all("baseline" in r["median_s"] for r in results) and results:
        baseline = sum(r["median_s"]["baseline"] for r in results)
        fields["baseline_s"] = f"{baseline:.3f}"
        fields["torchport/baseline"] = f"{torchport / baseline:.2f}"
        nocuda_base = m.get("nocuda baseline")
        if nocuda_base:
            ratio = m["nocuda torchport"] / nocuda_base
            fields["nocuda_torchport/baseline"] = f"{ratio:.2f}"
    return "summary: " + " ".join(f"{k}={v}" for k, v in fields.items())


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def print_report(results: list[dict], nocuda: dict, single: dict) -> None:
    names = [
        "grep",
        "startup",
        "parse x1",
        "parse x2",
        "torchport",
        "torchfix",
        "baseline",
    ]
    names = [n for n in names if any(n in r["median_s"] for r in results)]
    head = ["project", "py files", "cuda files", *[f"{n} s" for n in names]]
    head += ["tp/parse x2", "tf/tp", "peak RSS MiB", "torchport rc"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for r in results:
        m, q = r["median_s"], r["ratios"]
        cells = [Path(r["folder"]).name, str(r["py_files"]), str(r["cuda_files"])]
        cells += [f"{m[n]:.3f}" if n in m else "-" for n in names]
        cells.append(f"{q['torchport/parse_x2']:.2f}")
        cells.append(
            f"{q['torchfix/torchport']:.2f}" if "torchfix/torchport" in q else "-"
        )
        rss = r["peak_rss_mib"]
        cells.append(f"{rss:.0f}" if rss else "-")
        cells.append("/".join(r["rc"]["torchport"]))
        print("| " + " | ".join(cells) + " |")
    m = nocuda["median_s"]
    print()
    print(
        f"no-CUDA tree ({nocuda['files']} files): torchport {m['nocuda torchport']:.3f} s, "
        f"grep {m['nocuda grep']:.3f} s, startup {m['startup']:.3f} s; "
        f"torchport/(grep+startup) = "
        f"{nocuda['ratios']['nocuda_torchport/(grep+startup)']:.2f} "
        f"(torchport rc {'/'.join(nocuda['rc']['nocuda torchport'])})"
    )
    for name, info in single["files"].items():
        print(
            f"{name} ({info['path']}, {info['bytes']} bytes): "
            f"{single['median_s'][name]:.3f} s "
            f"(torchport rc {'/'.join(single['rc'][name])})"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--repeats", "-n", type=int, default=3)
    ap.add_argument("--torchport", default=None, help="command (default: torchport)")
    ap.add_argument("--args", default="", help="extra torchport arguments")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--nocuda-files", type=int, default=300)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--baseline", default=None, help="another torchport command to time alike"
    )
    args = ap.parse_args(argv)
    cmd = shlex.split(args.torchport) if args.torchport else default_command()
    cmd += shlex.split(args.args)
    env = make_env()
    results = [bench_folder(f.resolve(), args, cmd, env) for f in args.folders]
    single = bench_single_files(results, args, cmd, env)
    nocuda = bench_nocuda(args, cmd, env)
    summary = summary_line(results, nocuda, single, args.repeats)
    if args.json:
        report = {"folders": results, "single": single, "nocuda": nocuda}
        print(json.dumps({**report, "summary": summary}, indent=1))
    else:
        print(f"command: {shlex.join(cmd)}; median of {args.repeats}, interleaved")
        print_report(results, nocuda, single)
        print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
