"""A compound statement whose body shares its header's line (``case "cuda": return
"nccl"``, ``else: x = 1``): its statements are no chunk of their own, since their
line does not parse without the header; the statement is rewritten whole."""

from __future__ import annotations

import ast
import textwrap

import pytest

from codemod.model.options import Options
from codemod.rewrite.chunks import select
from codemod.rewrite.pipeline import rewrite_source

# Each form with its site on the line of a header; `x` is set by it.
FORMS = {
    "if": "if flag: x = torch.ones(2).cuda()",
    "elif": "if not flag:\n    x = 1\nelif flag: x = torch.ones(2).cuda()",
    "else": "if not flag:\n    x = 1\nelse: x = torch.ones(2).cuda()",
    "for": "for i in range(1): x = torch.ones(2).cuda()",
    "for-else": "for i in range(1):\n    pass\nelse: x = torch.ones(2).cuda()",
    "while": "while flag: x = torch.ones(2).cuda(); break",
    "with": "with open(__file__): x = torch.ones(2).cuda()",
    "try": "try: x = torch.ones(2).cuda()\nexcept ImportError: pass",
    "except": "try:\n    raise ValueError\nexcept ValueError: x = torch.ones(2).cuda()",
    "finally": "try:\n    pass\nfinally: x = torch.ones(2).cuda()",
    "def": "def f(): return torch.ones(2).cuda()\nx = f()",
    "case": "match flag:\n    case True: x = torch.ones(2).cuda()\n    case _: pass",
    "cases": (
        "match flag:\n    case True:\n        x = torch.ones(2).cuda()\n"
        "    case _: x = torch.zeros(2).cuda()"
    ),
    "case-guard": (
        "match flag:\n    case True: x = 1; torch.cuda.synchronize()\n    case _: pass"
    ),
}


def _program(form: str, nested: bool) -> str:
    body = FORMS[form] + "\n"
    if nested:
        body = "def main():\n" + textwrap.indent(body, "    ") + "    return x\n"
    return "import torch\n\nflag = True\n" + body


@pytest.mark.parametrize("nested", [False, True], ids=["module", "function"])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_site_in_a_one_line_body_is_rewritten(form, nested):
    source = _program(form, nested)
    result = rewrite_source(source, Options())
    ast.parse(result.code)
    assert "cuda" not in result.code
    assert rewrite_source(result.code, Options()).code == result.code


def test_a_one_line_case_makes_its_match_the_chunk():
    source = (
        "match kind:\n"  # 1
        "    case 'gpu': x = x.cuda()\n"  # 2
        "    case _:\n"  # 3
        "        x = x.cuda()\n"  # 4
    )
    lines = source.splitlines(keepends=True)
    spans = [(c.start, c.end) for c in select(ast.parse(source), {2}, lines)]
    assert spans == [(1, 4)]
    # A body on lines of its own is still a chunk alone.
    spans = [(c.start, c.end) for c in select(ast.parse(source), {4}, lines)]
    assert spans == [(4, 4)]
