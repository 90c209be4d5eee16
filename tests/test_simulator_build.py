"""Building the tpsim simulator: the cache key, objects reused from an earlier
build, progress, and a builder inside a simulated run (tests/test_simulator.py
has the concurrent builders). Nothing here loads the simulator into pytest's
process.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codemod import simulate
from codemod.simulate import _build

pytestmark = pytest.mark.simulator

ROOT = Path(__file__).resolve().parents[1]


def test_a_build_inside_a_simulated_run_does_not_wait_for_itself(tmp_path):
    """A builder whose environment loads the simulator at import torch (a test
    suite run under `torchport simulate` that builds into its own cache): its
    compiling child must not load it, or it waits for the lock its parent holds."""
    built = simulate.build().parent
    copy = tmp_path / "simulator" / built.name
    shutil.copytree(built, copy)  # with its objects: ninja only relinks
    (copy / "built.json").unlink()
    (copy / "tpsim.so").unlink()
    env = simulate.environment(2)
    env["TORCHPORT_CACHE_DIR"] = str(tmp_path)
    code = "from codemod import simulate; print(simulate.build())"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(copy / "tpsim.so")
    assert "linked tpsim.so" in proc.stderr  # progress, as each step finishes


def test_a_stray_file_in_the_sources_keeps_the_cache_key(tmp_path, monkeypatch):
    folder = _build.build_dir()
    changed = tmp_path / "csrc"
    shutil.copytree(_build.CSRC, changed)
    (changed / "notes.txt").write_text("not compiled")
    monkeypatch.setattr(_build, "CSRC", changed)
    assert _build.build_dir() == folder


def test_a_new_build_reuses_the_objects_of_unchanged_sources(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHPORT_CACHE_DIR", str(tmp_path))
    changed = tmp_path / "csrc"
    shutil.copytree(_build.CSRC, changed)
    monkeypatch.setattr(_build, "CSRC", changed)
    old = _build.build_dir()
    old.mkdir(parents=True)
    for source in _build.sources():
        (old / (source.stem + ".o")).write_text(source.name)
    record = {"flags": _build.CFLAGS, "inputs": _build._input_hashes()}
    (old / "built.json").write_text(json.dumps(record))
    kernels = changed / "kernels.cpp"
    kernels.write_text(kernels.read_text() + "\n")
    new = _build.build_dir()
    new.mkdir()
    _build._reuse_objects(new)
    reused = {p.name for p in new.glob("*.o")}
    assert reused == {s.stem + ".o" for s in _build.sources()} - {"kernels.o"}
    header = changed / "sim.h"  # every source may include it: nothing reused
    header.write_text(header.read_text() + "\n")
    newer = _build.build_dir()
    newer.mkdir()
    _build._reuse_objects(newer)
    assert list(newer.glob("*.o")) == []
