"""TP6xx: ``torch.backends.cudnn`` and ``torch.backends.cuda`` flags: the rules, as data (no libcst).

The pass that finds and rewrites their sites is ``codemod.passes.backend_flags``.
"""

from __future__ import annotations

from codemod.model.rule import Fix, Rule

RULES = (
    Rule(
        "TP601",
        "cudnn-benchmark",
        "`torch.backends.cudnn.benchmark` tunes cuDNN only: it does nothing on other "
        "devices; keep it (no portable switch exists)",
        Fix.NONE,
        None,
        what="Reports reads and writes of `torch.backends.cudnn.benchmark`.",
        why="cuDNN autotuning has no counterpart on other devices; the assignment is "
        "harmless there, so nothing has to change, but a reader should know the "
        "speed-up is CUDA's alone.",
        before=("import torch\n" "\n" "torch.backends.cudnn.benchmark = True"),
        after="torch.backends.cudnn.benchmark = True  # noqa: TP601",
        safety="No fix needed.",
        valid=(
            (
                "import argparse\n"
                "\n"
                "parser = argparse.ArgumentParser()\n"
                'parser.add_argument("--cudnn-benchmark", action="store_true")\n'
                "args = parser.parse_args()\n"
                "if args.cudnn_benchmark:\n"
                '    print("benchmark mode")'
            ),
        ),
        severity="info",
    ),
    Rule(
        "TP602",
        "cudnn-deterministic",
        "`torch.backends.cudnn.deterministic` makes cuDNN deterministic, nothing else; "
        "for every device consider `torch.use_deterministic_algorithms(True)` "
        "(stricter: it raises on nondeterministic ops)",
        Fix.NONE,
        None,
        what="Reports reads and writes of `torch.backends.cudnn.deterministic`.",
        why="Off CUDA the flag does nothing, so a program that relied on it for "
        "reproducibility is no longer reproducible there.",
        before=("import torch\n" "\n" "torch.backends.cudnn.deterministic = True"),
        after="torch.backends.cudnn.deterministic = True\n"
        "torch.use_deterministic_algorithms(True)  # by hand, if every op allows it",
        safety="No automatic fix: `use_deterministic_algorithms(True)` raises on ops "
        "that have no deterministic implementation, and is not what the flag did.",
        valid=(("import torch\n" "\n" "torch.use_deterministic_algorithms(True)"),),
        severity="info",
    ),
    Rule(
        "TP603",
        "cudnn-enabled",
        "`torch.backends.cudnn.enabled` switches cuDNN only; other devices have no "
        "such switch",
        Fix.NONE,
        None,
        what="Reports reads and writes of `torch.backends.cudnn.enabled`.",
        why="Code that disables cuDNN to work around a bug or for exactness gets "
        "nothing equivalent elsewhere.",
        before=("import torch\n" "\n" "torch.backends.cudnn.enabled = False"),
        after="torch.backends.cudnn.enabled = False  # noqa: TP603",
        safety="No fix.",
        valid=(("import torch\n" "\n" "torch.backends.mkldnn.enabled = False"),),
        severity="info",
    ),
    Rule(
        "TP604",
        "matmul-allow-tf32",
        "`torch.backends.cuda.matmul.allow_tf32` is CUDA's name for the float32 "
        "matmul precision; use `torch.set_float32_matmul_precision`",
        Fix.UNSAFE,
        None,
        what="Rewrites `torch.backends.cuda.matmul.allow_tf32 = True` to `torch.set_"
        'float32_matmul_precision("high")` and `= False` to `("highest")`.',
        why="`set_float32_matmul_precision` is the device-generic switch: on CUDA it "
        "sets the same flag (same matmul results, measured on an H200) and other "
        "backends read it too.",
        before=("import torch\n" "\n" "torch.backends.cuda.matmul.allow_tf32 = True"),
        after=("import torch\n" "\n" 'torch.set_float32_matmul_precision("high")'),
        safety='`= False` -> "highest" is safe: it is the default on every device. '
        '`= True` -> "high" is unsafe: on other devices it also lowers precision '
        "(oneDNN TF32 on recent CPUs, a bf16 pass on TPU), which the CUDA flag did "
        "not do. Reads of the flag are only reported.",
        valid=(
            (
                "import torch\n"
                "\n"
                'torch.set_float32_matmul_precision("high")\n'
                "config.allow_tf32 = True"
            ),
        ),
        severity="info",
        reads_device=False,
    ),
    Rule(
        "TP605",
        "cudnn-allow-tf32",
        "`torch.backends.cudnn.allow_tf32` (TF32 convolutions) has no device-generic "
        "switch; it does nothing off CUDA, keep it",
        Fix.NONE,
        None,
        what="Reports reads and writes of `torch.backends.cudnn.allow_tf32`.",
        why="Neither `set_float32_matmul_precision` nor `torch.backends.fp32_precision` "
        "changes it (checked on an H200): there is nothing portable to rewrite to.",
        before=("import torch\n" "\n" "torch.backends.cudnn.allow_tf32 = True"),
        after="torch.backends.cudnn.allow_tf32 = True  # noqa: TP605",
        safety="No fix.",
        valid=(
            (
                "import torch\n"
                "\n"
                "allow_tf32 = args.tf32\n"
                "if allow_tf32:\n"
                '    torch.set_float32_matmul_precision("high")'
            ),
        ),
        severity="info",
    ),
    Rule(
        "TP606",
        "sdp-kernel",
        "`torch.backends.cuda.sdp_kernel` is deprecated and CUDA-named; use "
        "`torch.nn.attention.sdpa_kernel`",
        Fix.SAFE,
        (2, 3),
        what="Rewrites `torch.backends.cuda.sdp_kernel(enable_flash=..., enable_math="
        "..., enable_mem_efficient=..., enable_cudnn=...)` with literal booleans to "
        "`torch.nn.attention.sdpa_kernel([SDPBackend...])` listing the enabled ones.",
        why="The new context manager takes the backends to allow, and works with every "
        "device's scaled_dot_product_attention.",
        before=(
            "import torch\n"
            "\n"
            "with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):\n"
            "    out = torch.nn.functional.scaled_dot_product_attention(q, k, v)"
        ),
        after=(
            "import torch\n"
            "\n"
            "with torch.nn.attention.sdpa_kernel(\n"
            "    [torch.nn.attention.SDPBackend.MATH, torch.nn.attention.SDPBackend.CUDNN_ATTENTION]\n"
            "):\n"
            "    out = torch.nn.functional.scaled_dot_product_attention(q, k, v)"
        ),
        safety="Safe: sdp_kernel builds this very list (omitted flags default to True) "
        "and enters sdpa_kernel with it. Arguments that are not literal booleans are "
        "reported.",
        valid=(
            (
                "import torch\n"
                "from torch.nn.attention import SDPBackend, sdpa_kernel\n"
                "\n"
                "with sdpa_kernel(SDPBackend.MATH):\n"
                "    out = torch.nn.functional.scaled_dot_product_attention(q, k, v)"
            ),
        ),
        reads_device=False,
    ),
    Rule(
        "TP609",
        "cuda-backend-flag",
        "CUDA library setting (`torch.backends.cuda` / `torch.backends.cudnn`): no "
        "portable equivalent; keep it for CUDA, check what the code relies on",
        Fix.NONE,
        None,
        what="Reports every other use of `torch.backends.cuda.*` and "
        "`torch.backends.cudnn.*` (`cudnn.version()`, `cufft_plan_cache`, "
        "`preferred_linalg_library`, the per-backend SDP switches, ...).",
        why="They configure NVIDIA libraries; off CUDA they do nothing or report "
        "'unavailable'.",
        before=("import torch\n" "\n" "print(torch.backends.cudnn.version())"),
        after="print(torch.backends.cudnn.version())  # noqa: TP609",
        safety="No fix.",
        valid=(
            (
                "import torch\n"
                "\n"
                "if torch.backends.mps.is_available() or torch.backends.mkldnn.is_available():\n"
                '    print("fast kernels")'
            ),
        ),
    ),
)
