#!/usr/bin/env python
"""Fetch the benchmark corpus: 17 public PyTorch projects, each at a pinned commit.

Usage::

    python scripts/fetch_corpus.py FOLDER [--only NAME ...] [--dry-run]
    python scripts/benchmark.py $(python scripts/fetch_corpus.py FOLDER)

It prints the folders to benchmark, one a line (for diffusers, its ``examples/``).

Each project lands in FOLDER/NAME as a shallow checkout of one commit: the equivalent
of ``git clone --depth 1`` at that commit (``git clone`` itself takes only a branch
or tag, so the commit is fetched by its hash, which GitHub serves)::

    git init NAME
    git -C NAME fetch --depth 1 URL COMMIT
    git -C NAME checkout --detach FETCH_HEAD

For diffusers only ``examples/`` (and the files at its top) is checked out: a sparse
checkout.  A project already at its commit is left alone, so the script can be run
again after a broken download.  The projects' code is measured, never committed here.
Needs ``git`` and access to github.com.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import List, NamedTuple, Optional


class Project(NamedTuple):
    name: str
    repo: str  # owner/name on GitHub
    commit: str
    subdir: Optional[str] = None  # only this folder is benchmarked


CORPUS = [
    Project("nanoGPT", "karpathy/nanoGPT", "196160b849eaed4465310c082db2c9dc7bc11ba9"),
    Project("examples", "pytorch/examples", "012fb09d361ef7ee336fbdc2c350df0873d73320"),
    Project(
        "pytorch-image-models",
        "huggingface/pytorch-image-models",
        "328339a0861818b338a28697836d7e03736939bb",
    ),
    Project("whisper", "openai/whisper", "b9f17e1f2da9fe735910c94593dba8d7c25f2a4a"),
    Project("minGPT", "karpathy/minGPT", "0fc12d703ddc2cb3c740e0523c69d46506b63c89"),
    Project("yolov5", "ultralytics/yolov5", "5033ac38263b333f2bc3b4994dff4af69fbd1818"),
    Project("llama", "meta-llama/llama", "c25b02d2a42cfa64028a1705a907e62ab2b1a732"),
    Project(
        "segment-anything",
        "facebookresearch/segment-anything",
        "dca509fe793f601edb92606367a655c15ac00fdf",
    ),
    Project(
        "stable-diffusion",
        "CompVis/stable-diffusion",
        "69ae4b35e0a0f6ee1af8bb9a5d0016ccb27e36dc",
    ),
    Project(
        "detectron2",
        "facebookresearch/detectron2",
        "a097b53ee6bc276fc222562a8faa0fdb93284529",
    ),
    Project(
        "fairseq",
        "facebookresearch/fairseq",
        "1698c5b8b6208ef271134dafe920525f94dc6910",
    ),
    Project(
        "litgpt", "Lightning-AI/litgpt", "dda6f800a7efd162ed034cdb451d1670344f5713"
    ),
    Project(
        "dinov2", "facebookresearch/dinov2", "e203621e57d88cd67f76db74c2ec78ea8f8bb775"
    ),
    Project(
        "diffusers",
        "huggingface/diffusers",
        "487dd1af2d1c7c93abb9f0a1a76e81ef0473d516",
        subdir="examples",
    ),
    Project(
        "denoising-diffusion-pytorch",
        "lucidrains/denoising-diffusion-pytorch",
        "5999fc170363c5cdf60c3bfebb38db60dfcce217",
    ),
    Project(
        "open_clip",
        "mlfoundations/open_clip",
        "17be18882251b92371a6e0c08f0c88b4923850a7",
    ),
    Project("DiT", "facebookresearch/DiT", "93d510aeca2ba0781cfa4150d9229fc9b3bf16fb"),
]

URL = "https://github.com/{repo}.git"


def commands(project: Project, folder: Path, url: str) -> List[List[str]]:
    """The git commands that bring ``project`` to ``folder`` at its commit."""
    git = ["git", "-C", str(folder)]
    steps = [["git", "init", "--quiet", str(folder)]]
    if project.subdir:
        steps.append([*git, "sparse-checkout", "set", project.subdir])
    steps.append(
        [*git, "fetch", "--quiet", "--depth", "1", url, project.commit],
    )
    steps.append([*git, "checkout", "--quiet", "--detach", "FETCH_HEAD"])
    return steps


def at_commit(folder: Path, commit: str) -> bool:
    proc = subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "--verify", "--quiet", "HEAD"],
        capture_output=True,
        text=True,
    )
    return proc.returncode == 0 and proc.stdout.strip() == commit


def fetch(project: Project, root: Path, url_template: str, dry_run: bool) -> Path:
    """Check ``project`` out under ``root``; return the folder to benchmark."""
    checkout = root / project.name
    target = checkout / project.subdir if project.subdir else checkout
    if not dry_run and at_commit(checkout, project.commit):
        return target
    if not dry_run and checkout.exists() and any(checkout.iterdir()):
        if not (checkout / ".git").is_dir():
            raise SystemExit(
                f"{checkout} exists and is not a checkout; remove it first"
            )
    for step in commands(project, checkout, url_template.format(repo=project.repo)):
        if dry_run:
            print(" ".join(step), file=sys.stderr)
        else:
            subprocess.run(step, check=True)
    return target


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--only", nargs="+", metavar="NAME", help="fetch only these")
    ap.add_argument("--dry-run", action="store_true", help="print the git commands")
    ap.add_argument(
        "--url", default=URL, help="URL template with {repo} (default: %(default)s)"
    )
    args = ap.parse_args(argv)
    wanted = CORPUS
    if args.only:
        unknown = set(args.only) - {p.name for p in CORPUS}
        if unknown:
            ap.error(f"not in the corpus: {', '.join(sorted(unknown))}")
        wanted = [p for p in CORPUS if p.name in args.only]
    if not args.dry_run:
        args.folder.mkdir(parents=True, exist_ok=True)
    for project in wanted:
        print(
            f"{project.name}: {project.repo} @ {project.commit[:12]}", file=sys.stderr
        )
        print(fetch(project, args.folder, args.url, args.dry_run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
