"""Only the statements that can hold a site are parsed; every other byte is kept."""

from __future__ import annotations

import ast
import itertools

from codemod.rewrite.chunks import select
from codemod.passes.names import ModuleFacts
from codemod.model.options import Options
from codemod.passes import PASSES
from codemod.rewrite.hits import context_lines
from codemod.rewrite.pipeline import rewrite_source


def rewrite(source: str) -> str:
    return rewrite_source(source, Options()).code


def chunk_spans(source: str, hits):
    lines = source.splitlines(keepends=True)
    return [
        (c.start, c.end, c.indent) for c in select(ast.parse(source), set(hits), lines)
    ]


def test_descends_into_classes_functions_and_blocks():
    source = (
        "class A:\n"  # 1
        "    def f(self, x):\n"  # 2
        '        """Doc."""\n'  # 3
        "        for i in range(3):\n"  # 4
        "            x = x.cuda()\n"  # 5
        "        return x\n"  # 6
    )
    assert chunk_spans(source, [5]) == [(5, 5, "            ")]


def test_a_hit_in_a_header_takes_the_whole_statement():
    source = "def f(device='cuda'):\n    return device\n"
    assert chunk_spans(source, [1]) == [(1, 2, "")]


def test_elif_condition_takes_the_whole_if():
    source = "if a:\n    pass\nelif b == 'cuda':\n    pass\n"
    assert chunk_spans(source, [3]) == [(1, 4, "")]


def test_statements_sharing_a_line_are_one_chunk():
    source = "def f(x):\n    a = 1; b = x.cuda()\n    return b\n"
    assert chunk_spans(source, [2]) == [(2, 2, "    ")]


def test_nested_rewrite_keeps_every_other_byte():
    source = (
        "import torch\n\n\n"
        "class Model:\n"
        "    '''Weird   spacing   stays.'''\n"
        "    def  forward( self ,x ) :\n"
        "        y = x.cuda()   # move\n"
        "        return  y\n"
    )
    out = rewrite(source)
    assert "        y = x.to(_DEVICE())   # move\n" in out
    assert "    def  forward( self ,x ) :\n" in out and "        return  y\n" in out


def test_chunk_that_cannot_be_dedented_falls_back_to_its_top_statement():
    source = (
        "import torch\n\n\n"
        "def f(x):\n"
        '    text = """\n'
        "at column zero\n"
        '"""\n'
        "    return x.cuda(), text\n"
    )
    out = rewrite(source)
    assert "return x.to(_DEVICE()), text" in out
    assert 'text = """\nat column zero\n"""' in out


def test_crlf_is_kept_on_changed_and_unchanged_lines():
    source = "import torch\r\n\r\nx = torch.ones(2)\r\ny = x.cuda()\r\n"
    out = rewrite(source)
    assert ".to(_DEVICE())" in out
    assert out.count("\n") == out.count("\r\n")


def test_tabs_indentation():
    source = "import torch\n\n\ndef f(x):\n\tif x is not None:\n\t\treturn x.cuda()\n"
    out = rewrite(source)
    assert "\t\treturn x.to(_DEVICE())\n" in out


def test_shadowed_import_is_not_resolved():
    source = "import torch\n\n\ndef f(torch):\n    return torch.device('cuda')\n"
    tree = ast.parse(source)
    facts = ModuleFacts.of(tree, source)
    inside = tree.body[1].body[0].value.func  # torch.device, in f
    assert facts.shadowed == {"torch": [(4, 5)]} and not facts.qualified_name(inside)
    assert facts.qualified_name(ast.parse("torch.device").body[0].value) is not None
    result = rewrite_source(source, Options())
    assert result.code == source
    assert [d.code for d in result.diagnostics] == ["TP109"]


def test_aliases_resolve_through_imports():
    source = "import torch as th\nfrom torch import cuda as c\nfrom torch.cuda.amp import GradScaler\n"
    facts = ModuleFacts.of(ast.parse(source), source)
    assert facts.imports == {
        "th": "torch",
        "c": "torch.cuda",
        "GradScaler": "torch.cuda.amp.GradScaler",
    }
    assert facts.torch_alias == "th"


def test_binding_goes_after_the_imports_when_only_functions_use_it():
    source = (
        '"""Doc."""\n'
        "import os\n"
        "import torch\n"
        "\n"
        "X = os.sep\n"
        "\n\n"
        "def f():\n"
        "    return torch.zeros(1, device='cuda')\n"
    )
    out = rewrite(source)
    assert out.index("def _DEVICE():") > out.index("import torch")
    assert out.index("def _DEVICE():") < out.index("X = os.sep")


def test_comment_only_mentions_change_nothing():
    source = (
        "import torch\n\n\ndef f():\n    # runs on cuda, see cuda docs\n    return 1\n"
    )
    assert rewrite(source) == source


def test_blank_lines_with_spaces_survive_black_in_a_changed_chunk():
    import black

    # The hit is in the header, so the whole function is one chunk, blank line too.
    source = (
        "import torch\n\n\n"
        "def f(x, device='cuda'):\n"
        "    y = x.cuda()\n"
        "    \n"
        "    return y\n"
    )
    out = rewrite_source(source, Options(), format_mode=black.Mode()).code
    assert "    y = x.to(_DEVICE())\n    \n    return y\n" in out


def test_assigning_an_attribute_does_not_shadow_the_module():
    source = "import torch\ntorch.backends.cudnn.benchmark = True\n"
    facts = ModuleFacts.of(ast.parse(source), source)
    assert facts.imports == {"torch": "torch"}
    assert facts.stored_attributes == {"benchmark"}


def test_a_comment_in_a_long_body_does_not_take_the_whole_function():
    source = (
        "def main():\n"  # 1
        "    a = 1\n"  # 2
        "    # see cuda.html\n"  # 3
        "    b = a.cuda()\n"  # 4
        "    return b\n"  # 5
    )
    assert chunk_spans(source, [3, 4]) == [(4, 4, "    ")]


def test_a_comment_in_a_header_still_takes_the_whole_statement():
    source = "def f(\n    x,\n    # cuda\n):\n    return x\n"
    assert chunk_spans(source, [3]) == [(1, 5, "")]


def test_a_run_of_statements_with_sites_is_one_chunk_but_imports_stay_apart():
    source = (
        "import torch\n"  # 1
        "torch.cuda.empty_cache()\n"  # 2
        "torch.cuda.synchronize()\n"  # 3
        "def f():\n"  # 4
        "    torch.cuda.synchronize()\n"  # 5
        "    torch.cuda.empty_cache()\n"  # 6
        "    x = 1\n"  # 7
        "    torch.cuda.empty_cache()\n"  # 8
        "    return x\n"  # 9
        "device = 'cuda'\n"  # 10
        "torch.cuda.empty_cache()\n"  # 11
    )
    lines = source.splitlines(keepends=True)
    found = select(ast.parse(source), {1, 2, 3, 5, 6, 8, 10, 11}, lines, alone={10})
    spans = [(c.start, c.end, c.indent) for c in found]
    assert spans == [
        (1, 1, ""),
        (2, 3, ""),
        (5, 6, "    "),
        (8, 8, "    "),
        (10, 10, ""),  # the statement that becomes the device binding
        (11, 11, ""),
    ]


def test_an_early_exit_takes_the_rest_of_its_block():
    source = (
        "def f():\n"  # 1
        "    if not torch.cuda.is_available():\n"  # 2
        "        return\n"  # 3
        "    x = 1\n"  # 4
        "    torch.cuda.empty_cache()\n"  # 5
        "    return x\n"  # 6
        "print(f())\n"  # 7
    )
    lines = source.splitlines(keepends=True)
    found = select(ast.parse(source), {2, 5}, lines)
    assert [(c.start, c.end, c.to_end) for c in found] == [(2, 6, True)]


def test_common_words_do_not_widen_a_chunk():
    # `range`, `benchmark`, `start` are not nvtx or profiler calls: the loop that
    # mentions them is not taken whole, and the rewrite keeps one statement's guard.
    source = (
        "import torch\n"
        "def f():\n"
        "    torch.backends.cudnn.benchmark = True\n"
        "    for i in range(2):\n"
        "        start = i\n"
        "    torch.cuda.empty_cache()\n"
    )
    out = rewrite(source)
    assert "    for i in range(2):\n        start = i\n" in out
    assert "torch.accelerator.empty_cache()" in out


def test_an_imported_cuda_only_call_is_seen_with_its_whole_statement():
    # `mark` is `torch.cuda.nvtx.mark` spelled out: like the dotted call, its line
    # makes the pass see the whole function around it (its enclosing checks).
    source = (
        "import torch\n"
        "from torch.cuda.nvtx import mark\n"
        "def f(device):\n"
        "    mark('step')\n"
        "    torch.cuda.nvtx.mark('step')\n"
        "    bookmark = start = 1\n"
        "    return device\n"
    )
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    patterns = [p.FUNCTION_CONTEXT for p in PASSES]
    ends = list(itertools.accumulate(map(len, lines)))
    found = context_lines(source, lines, ends, patterns, ModuleFacts.of(tree, source))
    assert found == {2, 4, 5}


def test_a_cuda_only_statement_takes_its_function_not_its_class():
    source = (
        "class Pipeline:\n"  # 1
        "    def load(self):\n"  # 2
        "        return 1\n"  # 3
        "    def free(self):\n"  # 4
        "        if self.on_gpu:\n"  # 5
        "            torch.cuda.ipc_collect()\n"  # 6
        "        return 2\n"  # 7
        "if True:\n"  # 8
        "    torch.cuda.ipc_collect()\n"  # 9
    )
    lines = source.splitlines(keepends=True)
    found = select(ast.parse(source), {6, 9}, lines, whole_function={6, 9})
    assert [(c.start, c.end) for c in found] == [(4, 7), (8, 9)]


def test_functions_with_sites_are_never_one_run():
    # A run is for guards to share one `if`: forty functions whose headers hold a
    # site are forty chunks, not one chunk of the whole file.
    source = "".join(f"def f{i}(device='cuda'):\n    return {i}\n" for i in range(3))
    assert chunk_spans(source, [1, 3, 5]) == [(1, 2, ""), (3, 4, ""), (5, 6, "")]
