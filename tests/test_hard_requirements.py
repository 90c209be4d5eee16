"""A hard requirement of CUDA becomes one of an accelerator, whatever follows it: an
assert, a raise or an exit with a message stops only where no accelerator is, so the
port differs only where the original stopped. A return, a clean exit or a test skip
is no requirement: it stays with what it guards."""

from __future__ import annotations

import pytest

from codemod.model.options import Options
from codemod.rewrite.pipeline import rewrite_source

HEAD = "import sys\nimport unittest\n\nimport torch\n\n\ndef f():\n"
CUDA_ONLY_REST = "    torch.backends.cudnn.benchmark = True\n"

REQUIREMENTS = [
    '    assert torch.cuda.is_available(), "needs a GPU"\n',
    "    if not torch.cuda.is_available():\n        raise RuntimeError('no GPU')\n",
    "    if not torch.cuda.is_available():\n        raise SystemError\n",
    '    if not torch.cuda.is_available():\n        sys.exit("no GPU")\n',
    "    if not torch.cuda.is_available():\n        sys.exit(2)\n",
    "    if not torch.cuda.is_available():\n        print('no');exit(1)\n",
]


@pytest.mark.parametrize("guard", REQUIREMENTS)
def test_a_hard_requirement_is_widened_whatever_follows(guard):
    source = HEAD + guard + CUDA_ONLY_REST
    code = rewrite_source(source, Options()).code
    assert "torch.accelerator.is_available()" in code
    assert "torch.cuda.is_available()" not in code
    widened = guard.replace("torch.cuda.is_available", "torch.accelerator.is_available")
    assert widened in code  # the message and the rest are unchanged
    assert code.endswith(CUDA_ONLY_REST)


NOT_REQUIREMENTS = [
    "    if not torch.cuda.is_available():\n        return\n",
    "    if not torch.cuda.is_available():\n        sys.exit(0)\n",
    "    if not torch.cuda.is_available():\n        sys.exit()\n",
    "    if not torch.cuda.is_available():\n        raise unittest.SkipTest('gpu')\n",
]


@pytest.mark.parametrize("guard", NOT_REQUIREMENTS)
def test_an_exit_that_is_no_requirement_stays_with_what_follows(guard):
    source = HEAD + guard + CUDA_ONLY_REST
    result = rewrite_source(source, Options())
    assert result.code == source  # the rest stays CUDA's, so the guard does
    assert "TP301" in {d.code for d in result.diagnostics}
