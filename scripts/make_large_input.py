#!/usr/bin/env python
"""Write large, realistic inputs for timing torchport: long training scripts.

Usage::

    python scripts/make_large_input.py OUT_DIR [--lines 1500] [--megabytes 1.0]

Writes into OUT_DIR:

``train_long_main.py``  one ``main()`` of about ``--lines`` lines, shaped like the big
                        diffusers training scripts (argument handling, model set-up, a
                        nested training loop, validation, saving), with a handful of CUDA
                        sites: one in ``main``'s own header (so the whole function is the
                        statement that holds it), a ``with`` whose header holds one around
                        the training loop, guards, ``.cuda()`` calls, backend flags.
``train_1mb.py``        about ``--megabytes`` MB of such functions, one after another.

Everything is generated (no project's code is copied); the same arguments always give
the same files.
"""

from __future__ import annotations

import argparse
from pathlib import Path

HEADER = '''"""Generated training script (scripts/make_large_input.py)."""

import argparse
import logging
import math
import os

import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)


'''

# Plain statements without CUDA, {i} numbered so that no two are the same.
PLAIN = [
    "learning_rate_{i} = args.learning_rate * args.gradient_accumulation_steps * {i}\n",
    "params_{i} = [p for p in model.parameters() if p.requires_grad and p.ndim > 1]\n",
    'logger.info(f"step {{global_step}}: loss {{loss_{i}:.4f}}, lr {{lr_{i}:.2e}}")\n',
    "config_{i} = {{'rank': args.rank, 'alpha': args.alpha * {i}, 'dropout': 0.1,"
    " 'targets': ['to_q', 'to_k', 'to_v', 'to_out.0']}}\n",
    "weights_{i} = compute_weighting(sigmas, scheme=args.weighting_scheme, step={i})\n",
    "if args.report_to == 'wandb' and step % {i} == 0:\n"
    "    tracker.log({{'loss': loss_{i}, 'epoch': epoch}}, step=global_step)\n",
    "for name_{i}, module_{i} in model.named_modules():\n"
    "    if isinstance(module_{i}, torch.nn.Linear) and name_{i}.endswith('proj'):\n"
    "        module_{i}.weight.data.normal_(mean=0.0, std=0.02 / math.sqrt({i}))\n",
    "try:\n"
    "    state_{i} = load_state(os.path.join(args.output_dir, f'checkpoint-{i}'))\n"
    "except FileNotFoundError:\n"
    "    state_{i} = None\n",
    "noise_{i} = torch.randn_like(latents) + args.noise_offset * torch.randn("
    "(latents.shape[0], latents.shape[1], 1, 1), device=latents.device)\n",
    "loss_{i} = F.mse_loss(model_pred.float(), target.float(), reduction='none')"
    ".mean(dim=list(range(1, len(target.shape)))).mean()\n",
]

# CUDA sites, each a statement at the indentation it is put at.
SITES = [
    "torch.cuda.empty_cache()\n",
    "batch_{i} = batch_{i}.cuda()\n",
    "if torch.cuda.is_available():\n    torch.cuda.synchronize()\n",
    "if args.allow_tf32:\n    torch.backends.cuda.matmul.allow_tf32 = True\n",
    "free_{i}, total_{i} = torch.cuda.mem_get_info()\n",
]


def _indent(text: str, depth: int) -> str:
    pad = "    " * depth
    return "".join(
        pad + line if line.strip() else line for line in text.splitlines(True)
    )


def function(name: str, lines: int, sites: int, seed: int) -> str:
    """A ``def`` of about ``lines`` lines with ``sites`` CUDA sites spread through it."""
    out = [f'def {name}(args, model, device="cuda"):\n', '    """Train."""\n']
    body = []
    count = 0
    i = seed
    while count < lines:
        i += 1
        text = PLAIN[i % len(PLAIN)].format(i=i)
        body.append(text)
        count += text.count("\n")
    every = max(len(body) // (sites + 1), 1)
    for n in range(sites):
        body.insert((n + 1) * every, SITES[n % len(SITES)].format(i=i + n))
    third = len(body) // 3
    setup, loop, tail = body[:third], body[third : 2 * third], body[2 * third :]
    out += [_indent(text, 1) for text in setup]
    out.append("    global_step = 0\n")
    out.append('    with torch.autocast("cuda", dtype=torch.bfloat16):\n')
    out.append("        for epoch in range(args.num_train_epochs):\n")
    out.append("            for step, batch in enumerate(train_dataloader):\n")
    out += [_indent(text, 4) for text in loop]
    out.append("                global_step += 1\n")
    out += [_indent(text, 1) for text in tail]
    out.append("    return model\n\n\n")
    return "".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--lines", type=int, default=1500)
    parser.add_argument("--megabytes", type=float, default=1.0)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    long_main = HEADER + function("main", args.lines, 6, 0)
    (args.out / "train_long_main.py").write_text(long_main)
    parts = [HEADER]
    size, n = len(HEADER), 0
    while size < args.megabytes * 1e6:
        part = function(f"train_{n}", 300, 3, n * 1000)
        parts.append(part)
        size += len(part)
        n += 1
    (args.out / "train_1mb.py").write_text("".join(parts))


if __name__ == "__main__":
    main()
