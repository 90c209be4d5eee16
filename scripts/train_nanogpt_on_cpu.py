"""Rewrite a copy of karpathy/nanoGPT with torchport and train it a few steps on CPU.

    python scripts/train_nanogpt_on_cpu.py PATH/TO/nanoGPT [--iters 4] [--simulate]

``--simulate`` trains on torchport's simulated accelerator instead
(``torchport simulate``), where what a CPU run cannot show surfaces.

The checkout is copied to a temporary folder (never modified), rewritten with
``python -m codemod``, given a tiny character dataset made here, and ``train.py``
runs with a tiny model and no ``--device`` flag: the rewritten defaults must pick
the CPU by themselves. Exit status: train.py's.
"""

from __future__ import annotations

import argparse
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make_dataset(folder: Path) -> None:
    import numpy as np

    text = "to be or not to be, that is the question. " * 200
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = np.array([stoi[c] for c in text], dtype=np.uint16)
    folder.mkdir(parents=True, exist_ok=True)
    split = int(len(ids) * 0.9)
    ids[:split].tofile(folder / "train.bin")
    ids[split:].tofile(folder / "val.bin")
    with open(folder / "meta.pkl", "wb") as handle:
        pickle.dump(
            {"vocab_size": len(chars), "itos": dict(enumerate(chars)), "stoi": stoi},
            handle,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("nanogpt", type=Path)
    parser.add_argument("--iters", type=int, default=4)
    parser.add_argument(
        "--simulate", action="store_true", help="on the simulated accelerator"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "nanoGPT"
        shutil.copytree(args.nanogpt, work, ignore=shutil.ignore_patterns(".git"))
        env = dict(os.environ, PYTHONPATH=str(ROOT), CUDA_VISIBLE_DEVICES="")
        rewrite = subprocess.run(
            [sys.executable, "-m", "codemod", "-q", "--target-torch", "2.10", "."],
            cwd=work,
            env=env,
        )
        print(f"torchport exit status: {rewrite.returncode} (1: sites left to report)")
        make_dataset(work / "data" / "tiny")
        command = [
            sys.executable, "train.py", "--dataset=tiny", "--compile=False",
            f"--max_iters={args.iters}", "--eval_interval=2", "--eval_iters=2",
            "--log_interval=1", "--block_size=32", "--batch_size=4", "--n_layer=2",
            "--n_head=2", "--n_embd=32", "--dropout=0.0", "--out_dir=out-tiny",
            "--always_save_checkpoint=False", "--lr_decay_iters=4", "--warmup_iters=1",
        ]  # fmt: skip
        if args.simulate:
            command[:0] = [sys.executable, "-m", "codemod", "simulate", "--"]
        print("$", " ".join(command[1:]))
        return subprocess.run(command, cwd=work, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
