#!/usr/bin/env python
"""Run every fixtures/programs/ after file on TorchTPU's stack (torch-tpu beside CPU torch).

Usage::

    python scripts/torchtpu_check.py [--venv DIR] [--programs DIR] [-k SUBSTRING]
                                     [--timeout 600] [--no-install] [--on-tpu-vm]
                                     [--jobs N] [--verbose]

The script creates a virtualenv (default ``build/torchtpu-venv``) that sees the CPU torch
of the interpreter running it (a ``.pth`` file pointing at that torch's site-packages),
installs ``torch-tpu`` there with pip (it pulls ``libtpu``, a few hundred MB: this is not
a CI step), and then:

1. probes the stack: torch and torch-tpu versions, whether ``torch.tpu`` is registered,
   what ``torch.accelerator.current_accelerator(check_available=True)`` says (``None``
   on a machine without a TPU, so the device binding picks the CPU);
2. checks the TorchTPU rows of ``codemod/backends.py`` against the live ``torch.tpu``
   module (a ``yes`` must be an attribute, a ``no`` must not);
3. runs every ``<name>.after.py`` under ``--programs`` with plain CPU torch and with the
   TorchTPU venv, each in a fresh temporary folder, and compares their standard output.

Off a TPU VM, libtpu asks the GCE metadata server for the TPU topology when the first
operation runs (30 tries per key, minutes per program); the script sets
``TPU_SKIP_MDS_QUERY=1`` to skip that, unless ``--on-tpu-vm`` says there is a server.

It prints a table and ends with one machine-readable line::

    torchtpu: N programs, N ran, N same as cpu, N failed, N evidence mismatches

and exits 0 when every program that runs on CPU also runs, with the same output, on the
TorchTPU stack and the evidence holds; 1 otherwise; 2 when the stack cannot be set up.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import venv
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

from codemod.catalog.backends import IDIOMS, UNKNOWN, YES  # noqa: E402
from cuda_equivalence import run  # noqa: E402

PROBE = r"""
import json, sys, time
start = time.time()
import torch
loaded = time.time() - start
info = {"torch": torch.__version__, "import_seconds": round(loaded, 1)}
try:
    from importlib.metadata import version
    info["torch_tpu"] = version("torch-tpu")
except Exception as error:
    info["torch_tpu"] = f"missing: {error}"
tpu = getattr(torch, "tpu", None)
info["torch.tpu"] = tpu is not None
accelerator = torch.accelerator.current_accelerator(check_available=True)
info["accelerator"] = str(accelerator)
names = json.loads(sys.argv[1])
info["attributes"] = {name: tpu is not None and hasattr(tpu, name) for name in names}
print(json.dumps(info))
"""
DEVICE_MODULE_PREFIX = "torch.get_device_module(_DEVICE())."


def _device_module_attribute(idiom: str):
    """``synchronize`` for ``torch.get_device_module(_DEVICE()).synchronize()``."""
    text = idiom[len("with ") :] if idiom.startswith("with ") else idiom
    if not text.startswith(DEVICE_MODULE_PREFIX):
        return None
    return text[len(DEVICE_MODULE_PREFIX) :].split("(")[0]


def make_venv(folder: Path, timeout: float) -> Path:
    """A venv that sees this interpreter's CPU torch, with torch-tpu installed."""
    import torch

    python = folder / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=True).create(folder)
    site = subprocess.run(
        [
            str(python),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    torch_site = Path(torch.__file__).resolve().parent.parent
    (Path(site) / "cpu-torch.pth").write_text(f"{torch_site}\n", encoding="utf-8")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "torch-tpu"],
        check=True,
        timeout=timeout,
    )
    return python


def probe(python: str, timeout: float) -> dict:
    attributes = sorted(
        {a for a in map(_device_module_attribute, IDIOMS) if a is not None}
    )
    done = subprocess.run(
        [python, "-c", PROBE, json.dumps(attributes)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def evidence_mismatches(attributes: dict) -> list:
    """TorchTPU rows of codemod/backends.py that the live torch.tpu contradicts."""
    wrong = []
    for idiom, row in IDIOMS.items():
        name = _device_module_attribute(idiom)
        evidence = row["tpu"]
        if name is None or evidence.status == UNKNOWN:
            continue
        if attributes.get(name) != (evidence.status == YES):
            wrong.append(
                f"{idiom}: table says {evidence.status}, torch.tpu says "
                f"{'has' if attributes.get(name) else 'lacks'} {name}"
            )
    return wrong


def _last_line(err: bytes) -> str:
    lines = err.decode(errors="replace").strip().splitlines()
    return lines[-1][:160] if lines else ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--venv", type=Path, default=REPO / "build" / "torchtpu-venv")
    ap.add_argument("--programs", type=Path, default=REPO / "fixtures" / "programs")
    ap.add_argument("-k", dest="pattern", help="only programs whose name contains this")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--no-install", action="store_true", help="use --venv as it is")
    ap.add_argument(
        "--on-tpu-vm",
        action="store_true",
        help="let libtpu query the metadata server (a real TPU VM)",
    )
    ap.add_argument("--jobs", "-j", type=int, default=1, help="programs at a time")
    ap.add_argument("--verbose", "-v", action="store_true")
    args = ap.parse_args(argv)

    try:
        if args.no_install:
            python = args.venv / "bin" / "python"
        else:
            python = make_venv(args.venv, timeout=3600)
        info = probe(str(python), args.timeout)
    except (subprocess.CalledProcessError, RuntimeError, OSError) as error:
        print(
            f"cannot set up the TorchTPU stack in {args.venv}: {error}", file=sys.stderr
        )
        return 2
    print(
        f"torch {info['torch']}, torch-tpu {info['torch_tpu']}, torch.tpu registered: "
        f"{info['torch.tpu']}, accelerator: {info['accelerator']}, "
        f"import torch took {info['import_seconds']} s"
    )
    mismatches = evidence_mismatches(info["attributes"])
    for line in mismatches:
        print(f"evidence mismatch: {line}")

    afters = sorted(args.programs.glob("*.after.py"))
    if args.pattern:
        afters = [a for a in afters if args.pattern in a.name]
    if not afters:
        print(f"no <name>.after.py under {args.programs}")
        return 2
    width = max(len(a.name) for a in afters)
    print(f"| {'program':{width}} | cpu rc | torchtpu rc | same output |")
    print(f"|{'-' * (width + 2)}|--------|-------------|-------------|")
    env = dict(os.environ, PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="")
    if not args.on_tpu_vm:
        env["TPU_SKIP_MDS_QUERY"] = "1"

    def both(after: Path):
        """The program with plain CPU torch, then on the TorchTPU stack."""
        return (
            run(sys.executable, after, args.timeout, env),
            run(str(python), after, args.timeout, env),
        )

    ran = same = failed = regressions = 0
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(both, afters))
    for after, ((rc_cpu, out_cpu, _), (rc_tpu, out_tpu, err_tpu)) in zip(
        afters, results
    ):
        ran += rc_tpu == "0"
        failed += rc_tpu != "0"
        same += out_cpu == out_tpu and rc_cpu == rc_tpu
        regressions += rc_cpu == "0" and (rc_tpu != "0" or out_cpu != out_tpu)
        mark = "yes" if out_cpu == out_tpu else "NO"
        print(f"| {after.name:{width}} | {rc_cpu:>6} | {rc_tpu:>11} | {mark:11} |")
        if rc_tpu != "0" and args.verbose:
            print(f"    torchtpu: {_last_line(err_tpu)}")
    print(
        f"torchtpu: {len(afters)} programs, {ran} ran, {same} same as cpu, "
        f"{failed} failed, {len(mismatches)} evidence mismatches"
    )
    return 1 if regressions or mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
