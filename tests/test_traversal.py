"""Inside a chunk, only the statements that hold a hit are visited, and a rewrite is
checked and formatted statement by statement."""

from __future__ import annotations

import re

import libcst as cst
import pytest

from codemod.rewrite import pipeline as transform
from codemod.rewrite.formatting import black_mode
from codemod.passes import PASSES
from codemod.model.options import Options
from codemod.passes.base import Pass


class SeesNames(Pass):
    """Records every name it visits; rewrites nothing."""

    TRIGGER = re.compile("cuda")
    seen: list = []

    def visit_Name(self, node: cst.Name) -> None:
        SeesNames.seen.append(node.value)


def long_function(header: str, body_site: str = "") -> str:
    plain = "".join(
        f"    value_{i} = compute(value_{i - 1}, {i})\n" for i in range(1, 400)
    )
    return f"import torch\n\n\n{header}\n{plain}{body_site}    return value_399\n"


def visited(source: str) -> list:
    SeesNames.seen = []
    transform.rewrite_source(source, Options(), passes=(SeesNames,))
    return SeesNames.seen


def record_checks(monkeypatch) -> list:
    """The code of every piece the self-check reads back, as it runs."""
    checked = []
    real = transform.check_built

    def recording(built, code, *args):
        checked.append(code)
        return real(built, code, *args)

    monkeypatch.setattr(transform, "check_built", recording)
    return checked


def test_statements_without_hits_are_not_visited():
    names = visited(long_function('def main(device="cuda"):'))
    assert "device" in names  # the header holds the hit
    assert not any(n.startswith("value_") for n in names)


def test_if_elif_chains_do_not_stop_the_skipping():
    chain = (
        "    if mode == 1:\n"
        "        picked = one\n"
        "    elif mode == 2:\n"
        "        picked = two\n"
        "    else:\n"
        "        picked = three\n"
    )
    names = visited(long_function('def main(device="cuda"):', chain))
    assert "device" in names
    assert not {"picked", "one", "two", "value_200"} & set(names)


class SeesNamesOfAmp(SeesNames):
    TRIGGER = re.compile("cuda|autocast")


def test_an_autocast_flag_is_not_a_guard():
    source = long_function(
        "def main(args):",
        "    if args.no_autocast:\n        quiet = value_1\n",
    )
    SeesNames.seen = []
    transform.rewrite_source(source, Options(), passes=(SeesNamesOfAmp,))
    assert "no_autocast" in SeesNames.seen and "quiet" not in SeesNames.seen
    SeesNames.seen = []
    source = source.replace("args.no_autocast", "args.cuda")
    transform.rewrite_source(source, Options(), passes=(SeesNamesOfAmp,))
    assert "quiet" in SeesNames.seen  # a CUDA test is judged with its body


def test_a_statement_with_a_hit_is_visited_whole():
    names = visited(
        long_function("def main(x):", "    y = value_3.cuda(non_blocking=True)\n")
    )
    assert {"y", "value_3", "cuda", "non_blocking"} <= set(names)
    assert "value_200" not in names


def test_a_guard_is_visited_with_everything_it_guards():
    source = (
        "import torch\n\n"
        "if torch.cuda.is_available():\n"
        "    model = build(size)\n"
        "    other = load(path)\n"
    )
    assert {"model", "build", "size", "other", "load", "path"} <= set(visited(source))


def test_a_long_function_is_checked_statement_by_statement(monkeypatch):
    checked = record_checks(monkeypatch)
    source = long_function(
        'def main(device="cuda"):', "    y = value_3.cuda(non_blocking=True)\n"
    )
    out = transform.rewrite_source(
        source, Options(unsafe_fixes=True), format_mode=black_mode(None)
    )
    assert "def main(device=_DEVICE().type):" in out.code
    assert "y = value_3.to(_DEVICE(), non_blocking=True)" in out.code
    # The header with a stub body, and the one changed statement: not 400 lines.
    assert max(len(code.splitlines()) for code in checked) <= 2, checked


class ForgetsParentheses(Pass):
    """``(a + b).cuda()`` becomes ``a + b.type``: a tree that its code does not give."""

    TRIGGER = re.compile("cuda")

    def leave_Call(self, original_node, updated_node):
        func = updated_node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "cuda":
            if self.record_and_decide(original_node, "TP201"):
                inner = func.value.with_changes(lpar=[], rpar=[])
                return cst.Attribute(value=inner, attr=cst.Name("type"))
        return updated_node


def test_a_faulty_rewrite_deep_in_a_long_function_is_caught():
    source = long_function('def main(device="cuda"):', "    y = (a + b).cuda()\n")
    with pytest.raises(transform.RewriteError) as caught:
        transform.rewrite_source(source, Options(), passes=(ForgetsParentheses,))
    assert "parses into a different tree" in str(caught.value)


def test_narrowed_rewrite_keeps_every_other_byte():
    source = long_function(
        'def main(device = "cuda"):   # keep', "    y = value_3.cuda( )  # here\n"
    )
    out = transform.rewrite_source(
        source, Options(unsafe_fixes=True), format_mode=black_mode(None)
    )
    old, new = source.splitlines(True), out.code.splitlines(True)
    added = len(new) - len(old)  # the device binding, above the function
    old, new = old[3:], new[3 + added :]
    changed = [i for i, (a, b) in enumerate(zip(old, new)) if a != b]
    assert [old[i].split("(")[0] for i in changed] == [
        "def main",
        "    y = value_3.cuda",
    ]
    assert new[0] == "def main(device=_DEVICE().type):  # keep\n"


def test_a_statement_rewritten_into_a_guard_is_checked_alone(monkeypatch):
    # The runtime pass turns a call into a guarded one (an ``if`` on one line).
    checked = record_checks(monkeypatch)
    source = long_function('def main(device="cuda"):', "    torch.cuda.empty_cache()\n")
    out = transform.rewrite_source(source, Options())
    assert "torch.accelerator.empty_cache()" in out.code
    assert max(len(code.splitlines()) for code in checked) <= 2, checked


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_statement_positions_are_libcsts_positions(newline):
    import ast

    from libcst.metadata import MetadataWrapper, PositionProvider

    from codemod.rewrite.positions import LazyMetadata, StatementPositions

    source = newline.join(
        [
            "# leading comment",
            "",
            "import torch; x = 1",
            "",
            "# about f",
            "@decorator  # trailing",
            "# between decorators",
            "@other(",
            "    'cuda',",
            ")",
            "def f(a,",
            "\tb):",
            "\tif a:  # tab-indented body",
            "\t\treturn torch.cuda.is_available()",
            "\telse:",
            '\t\treturn f"{b!r:>3}"',
            "",
            "",
            "class C:",
            '    """Doc."""',
            "    y = [1,",
            "         2]",
            "",
            "    @staticmethod",
            "    def m(a):",
            "        if a:",
            "# a comment at column 0 inside a block",
            "            return 1",
            "        elif a is None:  # elif",
            "            return 2",
            "        else:",
            "            return [3,",
            "  4]",
            "",
        ]
    )
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    metadata = LazyMetadata(module, ast.parse(source).body, 0, source)
    positions = metadata[PositionProvider]
    assert isinstance(positions, StatementPositions)
    assert len(positions.starts) > len(module.body)  # nested statements too

    class Asks(cst.CSTVisitor):  # as a traversal does: each node, in its statement
        def on_visit(self, node):
            positions.enter(node)
            assert positions[node] == expected[node], type(node).__name__
            return True

        def on_leave(self, node):
            positions.leave(node)

    module.visit(Asks())
    # Only statements were computed, never the whole chunk at once.
    assert positions.done <= set(positions.starts)
    fresh = LazyMetadata(module, ast.parse(source).body, 0, source)[PositionProvider]
    for node in reversed(list(expected)):  # asked out of order, outside a traversal
        assert fresh[node] == expected[node], type(node).__name__


@pytest.mark.parametrize("pass_class", PASSES, ids=lambda p: p.__name__)
def test_the_hooks_dispatched_are_the_ones_torchport_defines(pass_class):
    """Only hooks written in torchport are dispatched: every libcst transformer
    inherits an empty one for each node and each node's each attribute."""
    from codemod.rewrite.traversal import _hooks

    ours = {
        name
        for klass in pass_class.__mro__
        if klass.__module__.startswith("codemod")
        for name in vars(klass)
        if re.fullmatch(r"(visit|leave)_[A-Z][A-Za-z]*(_[a-z]\w*)?", name)
    }
    visits, leaves, attributes = _hooks(pass_class)
    assert {name for _, name in visits + leaves} | set(attributes) == ours
    assert all(name == f"visit_{node}" for node, name in visits)
    assert all(name == f"leave_{node}" for node, name in leaves)


def test_a_pass_that_dispatches_nodes_itself_is_refused():
    from codemod.rewrite.traversal import _hooks

    class Dispatching(Pass):
        TRIGGER = re.compile("cuda")

        def on_visit(self, node):
            return True

    with pytest.raises(TypeError):
        _hooks(Dispatching)
