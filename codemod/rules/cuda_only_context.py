"""TP912, TP914: CUDA in what surrounds the code, reported: environment variables
only CUDA reads, and tests that patch ``torch.cuda``. The rules, as data (no libcst).

The pass that finds their sites is ``codemod.passes.cuda_only``.
"""

from __future__ import annotations

from codemod.model.rule import Fix, Rule

RULES = (
    Rule(
        "TP912",
        "cuda-environment",
        "this environment variable configures CUDA only; other devices ignore it",
        Fix.NONE,
        None,
        what='Reports the strings "CUDA_LAUNCH_BLOCKING", "PYTORCH_CUDA_ALLOC_CONF", '
        '"CUBLAS_WORKSPACE_CONFIG", "CUDA_MODULE_LOADING", "CUDA_DEVICE_ORDER" and '
        'every "NCCL_..." and "TORCH_NCCL_..." name (`os.environ` reads and writes, '
        "`setdefault`, `update({...})`, `os.getenv`, `env=` dictionaries).",
        why="Each tunes or debugs CUDA (or cuBLAS, or NCCL, its collectives); on other "
        "accelerators it does nothing, and their own variables are named differently.",
        before=(
            "import os\n"
            "\n"
            "import torch\n"
            "\n"
            'os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"\n'
            "torch.use_deterministic_algorithms(True)"
        ),
        after='if _DEVICE().type == "cuda":  # by hand\n'
        '    os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"',
        safety="No fix.",
        valid=(("import os\n" "\n" 'os.environ["OMP_NUM_THREADS"] = "1"'),),
    ),
    Rule(
        "TP914",
        "patched-cuda",
        "a test patches this torch.cuda function; torchport leaves this file's calls "
        "of it as they are, so that the patch still reaches them",
        Fix.NONE,
        None,
        what='Reports `mock.patch("torch.cuda.X")`, `mock.patch.object(torch.cuda, '
        '"X")` and `monkeypatch.setattr` in either form (as a call, a decorator or a '
        "context manager), and a patch of another module's view "
        '(`"pkg.train.torch.cuda.X"`). In the file that patches, the calls of `X` are '
        "reported instead of fixed.",
        why='A test that patches `torch.cuda.is_available` to say "no GPU" no '
        "longer reaches code that asks `torch.accelerator`: it gets a device on CUDA, "
        "or fails on the CPU.",
        before=(
            "from unittest import mock\n"
            "\n"
            "import torch\n"
            "\n"
            "\n"
            "def pick():\n"
            '    return "cuda" if torch.cuda.is_available() else "cpu"\n'
            "\n"
            "\n"
            "def test_no_gpu():\n"
            '    with mock.patch("torch.cuda.is_available", return_value=False):\n'
            '        assert pick() == "cpu"'
        ),
        after="# by hand: patch what the ported code calls, e.g.\n"
        '# mock.patch("torch.accelerator.device_count", return_value=0)',
        safety="No fix.",
        valid=(
            (
                "from unittest import mock\n"
                "\n"
                "import torch\n"
                "\n"
                'with mock.patch("torch.accelerator.device_count", return_value=0):\n'
                "    assert torch.accelerator.device_count() == 0"
            ),
        ),
    ),
)
