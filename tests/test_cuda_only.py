"""The CUDA-only guard classifier that the runtime pass uses to keep such guards."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
import pytest
from libcst.metadata import MetadataWrapper, QualifiedNameProvider

from codemod.passes.cuda_only_code import cuda_only_guard_calls, guards_cuda_only_code


def _first_if(source: str):
    wrapper = MetadataWrapper(cst.parse_module(source))
    names = wrapper.resolve(QualifiedNameProvider)

    def qualified_name(node):
        found = names.get(node, ())
        found = {q.name for q in (found() if callable(found) else found)}
        return next(iter(found)) if len(found) == 1 else None

    node = m.findall(wrapper.module, m.If() | m.IfExp())[0]
    return node, qualified_name


CUDA_ONLY = [
    "if torch.cuda.is_available():\n    torch.backends.cudnn.benchmark = True\n",
    "if torch.cuda.is_available():\n    torch.cuda.nvtx.range_push('x')\n",
    "if torch.cuda.is_available():\n    g = torch.cuda.CUDAGraph()\n",
    "if torch.cuda.is_available():\n    import flash_attn\n",
    "if torch.cuda.is_available():\n    from apex import amp\n",
    "if torch.cuda.is_available() and args.fused:\n    ext = load('op', ['op.cu'])\n",
    "if torch.accelerator.is_available():\n    cudnn.deterministic = True\n",
    "if torch.cuda.is_available():\n    major = torch.cuda.get_device_properties(0).major\n",
    "ctx = nvtx.range('x') if torch.cuda.is_available() else None\n",
]
PORTABLE = [
    "if torch.cuda.is_available():\n    x = x.cuda()\n",
    "if torch.cuda.is_available():\n    torch.cuda.synchronize()\n",
    "if not torch.cuda.is_available():\n    torch.backends.cudnn.benchmark = True\n",
    "if torch.cuda.is_available():\n    pass\nelse:\n    import flash_attn\n",
    "if torch.cuda.is_available() or force:\n    torch.backends.cudnn.benchmark = True\n",
    "if args.cuda:\n    torch.backends.cudnn.benchmark = True\n",
    # a capability test is ported where it is (TP316: False off CUDA)
    "if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:\n"
    "    dtype = torch.bfloat16\n",
    "if torch.cuda.is_available():\n    print(torch.cuda.get_device_name(0))\n",
]
HEADER = (
    "import torch\nimport torch.backends.cudnn as cudnn\nimport torch.cuda.nvtx as nvtx\n"
    "from torch.utils.cpp_extension import load\n"
)


@pytest.mark.parametrize("body", CUDA_ONLY)
def test_cuda_only_guards(body):
    node, qualified_name = _first_if(HEADER + body)
    assert guards_cuda_only_code(node, qualified_name)
    calls = cuda_only_guard_calls(node, qualified_name)
    assert len(calls) == 1 and m.matches(
        calls[0].func, m.Attribute(attr=m.Name("is_available"))
    )


@pytest.mark.parametrize("body", PORTABLE)
def test_guards_of_portable_code(body):
    node, qualified_name = _first_if(HEADER + body)
    assert not guards_cuda_only_code(node, qualified_name)


def test_names_that_do_not_resolve_are_read_as_written():
    node = cst.parse_statement(
        "if torch.cuda.is_available():\n    torch.backends.cudnn.benchmark = True\n"
    )
    assert guards_cuda_only_code(node, lambda n: None) is False  # test unresolved
    resolve = {"torch.cuda.is_available"}

    def by_text(n):
        name = cst.Module([]).code_for_node(n)
        return name if name in resolve else None

    assert guards_cuda_only_code(node, by_text)


def test_rules_of_these_families_are_documented():
    from codemod.rules import all_rules

    rules = [r for code, r in all_rules().items() if code[:3] in ("TP5", "TP6", "TP9")]
    assert len(rules) >= 20
    for rule in rules:
        assert (
            rule.what and rule.why and rule.before and rule.after and rule.safety
        ), rule.code


def test_guards_around_code_torchport_ports_are_not_kept():
    for body in (
        "    torch.backends.cuda.matmul.allow_tf32 = True\n",
        "    ctx = torch.backends.cuda.sdp_kernel(enable_flash=False)\n",
    ):
        node, qualified_name = _first_if(
            HEADER + "if torch.cuda.is_available():\n" + body
        )
        assert not guards_cuda_only_code(node, qualified_name)


def test_nvtx_behind_a_kept_guard_is_not_rewritten():
    from codemod.model.options import Options
    from codemod.rewrite.pipeline import rewrite_source

    source = (
        "import torch\n\nif torch.cuda.is_available():\n"
        "    with torch.cuda.nvtx.range('step'):\n        pass\n"
        "with torch.cuda.nvtx.range('other'):\n    pass\n"
    )
    result = rewrite_source(source, Options(unsafe_fixes=True))
    assert "with torch.cuda.nvtx.range('step'):" in result.code
    assert "with torch.profiler.record_function('other'):" in result.code
    assert rewrite_source(result.code, Options(unsafe_fixes=True)).code == result.code
    assert [(d.line, d.code, d.applied) for d in result.diagnostics] == [
        (3, "TP910", False),
        (4, "TP902", False),
        (6, "TP902", True),
    ]
