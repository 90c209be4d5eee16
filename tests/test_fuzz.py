"""Property tests: random valid programs salted with real CUDA idioms.

For every program torchport accepts: no crash, the output parses, a second run
changes nothing, and comments and strings (other than device literals) are kept.
``scripts/fuzz_campaign.py`` runs the same check on many more programs.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections import Counter
from typing import Optional

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from codemod.rewrite.formatting import black_mode
from codemod.model.options import Options
from codemod.rewrite.pipeline import RoundTripError, rewrite_source

# Built once: building the grammar strategy costs about a second.
RANDOM_CODE = hypothesmith.from_grammar(auto_target=False)
NAMES = st.sampled_from(
    ["x", "y", "model", "batch", "t", "device", "dev", "cuda", "rank"]
)
EXPRS = st.sampled_from(
    [
        "x",
        "model",
        "batch[0]",
        "torch.ones(2)",
        "f(x)",
        "(a + b)",
        "x.y",
        "obj.cuda_tensor",
    ]
)
IDIOMS = [
    "{v} = {e}.cuda()",
    "{v} = {e}.cuda(0)",
    "{v} = {e}.cuda(non_blocking=True)",
    "{v} = {e}.cuda({v})",
    "{v} = torch.device('cuda')",
    '{v} = torch.device("cuda:0")',
    '{v} = torch.device("cuda", 1)',
    '{v} = torch.device("cuda" if torch.cuda.is_available() else "cpu")',
    '{v} = "cuda" if torch.cuda.is_available() else "cpu"',
    "{v} = {e}.is_cuda",
    "if {e}.is_cuda: {v} = 1",
    "{v} = {e}.pin_memory()",
    "{v} = torch.zeros(2, pin_memory=True)",
    '{v} = f"cuda:{{{v}}}"',
    "{v} = f'cuda:{{rank}}'",
    '{v} = {e}.to("cuda")',
    '{v} = {e}.to(device="cuda:1", non_blocking=True)',
    'if {e}.device.type == "cuda": pass',
    '{v} = {e}.device.type != "cuda"',
    '{v} = "cuda"',
    '{v} = ("cuda", "cpu")',
    '{v} = {{"cuda": 1, "cpu": 0}}',
    '{v} = "cuda" == {e}',
    "# move {v} to cuda with .cuda()",
    '"""{v}: runs on cuda (call .cuda() first)."""',
    'print("{v} is on cuda:", {e}.is_cuda)  # cuda!',
    "raise RuntimeError('cuda: out of memory')",
    "{v} = {e}.cuda()  # noqa: TP201",
    "{v} = torch.cuda.is_available()",
    "{v} = {e}.cuda() if torch.cuda.is_available() else {e}",
    "{v} = [{e}.cuda() for {v} in range(3)]",
    "{v} = lambda m: m.cuda()",
    "{v}: torch.Tensor = {e}.cuda()",
    "with torch.no_grad(): {v} = {e}.cuda()",
    "{v} = {e}.cuda()\\\n    .float()",
    "{v} = ({e}\n    .cuda())",
]
HEADERS = st.sampled_from(
    [
        "import torch\n",
        "import torch\nimport torch.nn as nn\n",
        "import torch as th\ntorch = th\n",
        "from torch import cuda\nimport torch\n",
        '"""Module docstring about cuda."""\nimport torch\n',
        "# -*- coding: utf-8 -*-\nfrom __future__ import annotations\nimport torch\n",
    ]
)


@st.composite
def idioms(draw) -> str:
    template = draw(st.sampled_from(IDIOMS))
    return template.format(v=draw(NAMES), e=draw(EXPRS)) + "\n"


@st.composite
def wrapped(draw, body: str) -> str:
    """``body`` at top level, or inside a function, class, if, or try."""
    kind = draw(st.sampled_from(["top", "def", "class", "if", "try"]))
    if kind == "top":
        return body
    indent = draw(st.sampled_from(["    ", "\t", "  "]))
    inner = "".join(indent + line + "\n" for line in body.splitlines())
    head = {
        "def": "def f(x, rank=0):\n",
        "class": "class C:\n",
        "if": "if x:\n",
        "try": "try:\n",
    }[kind]
    tail = "except Exception:\n    pass\n" if kind == "try" else ""
    return head + inner + tail


@st.composite
def programs(draw, random_code: bool = True) -> str:
    """A header, then idioms and random valid code in any order."""
    parts = [draw(HEADERS)]
    for _ in range(draw(st.integers(1, 6))):
        if random_code and draw(st.booleans()):
            parts.append(draw(RANDOM_CODE))
        else:
            parts.append(draw(wrapped(draw(idioms()))))
        if not parts[-1].endswith("\n"):
            parts[-1] += "\n"
    source = "".join(parts)
    ending = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    return source.replace("\n", ending) if ending != "\n" else source


def is_valid(source: str) -> bool:
    try:
        ast.parse(source)
        cst.parse_module(source)
    except (
        SyntaxError,
        ValueError,
        RecursionError,
        MemoryError,
        cst.ParserSyntaxError,
    ):
        return False
    return True


class Failure(AssertionError):
    """A property does not hold; ``kind`` says which."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind


def check(source: str, options: Optional[Options] = None, fmt: bool = True) -> str:
    """Rewrite ``source`` and check the properties; returns the output.

    Raises ``Failure`` ("crash", "invalid", "not idempotent", "comments",
    "strings"); returns ``source`` unchanged for input torchport refuses whole.
    """
    options = options or Options()
    mode = black_mode(None) if fmt else None
    try:
        output = rewrite_source(source, options, format_mode=mode).code
    except RoundTripError:
        return source  # reported to the user, file left untouched: not a failure
    except Exception as error:
        raise Failure("crash", f"{type(error).__name__}: {error}") from error
    if not is_valid(output):
        raise Failure("invalid", output)
    try:
        again = rewrite_source(output, options, format_mode=mode).code
    except Exception as error:
        raise Failure(
            "crash", f"second run: {type(error).__name__}: {error}"
        ) from error
    if again != output:
        raise Failure("not idempotent", output)
    if _comments(source) != _comments(output):
        raise Failure("comments", f"{_comments(source)} != {_comments(output)}")
    if _strings(source) != _strings(output):
        raise Failure("strings", f"{_strings(source)} != {_strings(output)}")
    return output


_DEVICE_LITERAL = re.compile(r"(cuda|cpu)(:\d+)?")
ACCESSOR_DOCS = {
    "The accelerator found on first use, else the CPU.",
    "The CUDA device found on first use, else the CPU.",
}
_DEVICE_TYPE = re.compile(r"\{\w+(\(\))?\.type\}")


def _tokens(source: str):
    return tokenize.generate_tokens(io.StringIO(source).readline)


def _comments(source: str) -> Counter:
    # black may write `#x` as `# x` on a line it formats: compare without spaces
    return Counter(
        "".join(t.string.split()) for t in _tokens(source) if t.type == tokenize.COMMENT
    )


def _strings(source: str) -> Counter:
    kept = Counter()
    for token in _tokens(source):
        if token.type != tokenize.STRING:
            continue
        prefix = token.string[: token.string.index(token.string[-1])].lower()
        if "f" in prefix:
            if "cuda" in token.string or _DEVICE_TYPE.search(token.string):
                continue  # f"cuda:{i}" <-> f"{_DEVICE().type}:{i}", by design
            kept[("f", _requoted(token.string))] += 1
            continue
        value = ast.literal_eval(token.string)
        if isinstance(value, str) and _DEVICE_LITERAL.fullmatch(value):
            continue
        if value in ACCESSOR_DOCS or value == "accelerator":
            # the accessor's docstring; below 2.6 its hasattr(torch, "accelerator")
            continue
        kept[("s", value)] += 1
    return kept


def _requoted(text: str) -> str:
    """black's string normalization: lower-case prefix, double quotes."""
    quote = text[-1]
    start = text.index(quote)
    prefix, body = text[:start].lower(), text[start:]
    if quote == "'" and '"' not in body.strip("'"):
        body = body.replace("'", '"')
    return prefix + body


FAST = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)


@FAST
@given(programs(random_code=False))
def test_cuda_idioms(source):
    assume(is_valid(source))
    check(source)


@FAST
@given(programs(random_code=True))
def test_random_code_with_cuda_idioms(source):
    assume(is_valid(source))
    check(source)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    programs(random_code=False),
    st.booleans(),
    st.sampled_from([(2, 5), (2, 6), (2, 10)]),
)
def test_options_and_no_format(source, unsafe, target):
    assume(is_valid(source))
    check(source, Options(target_torch=target, unsafe_fixes=unsafe), fmt=False)


def test_torch_used_without_import_is_idempotent():
    # `torch` from a star import: the first run must read it as the second will.
    check("x = x.cuda()\nx = torch.device('cuda')\n")


def test_check_catches_a_changed_comment():
    # the checker itself must be able to fail
    with pytest.raises(Failure, match="comments"):
        _assert_same_comments("x = 1  # cuda\n", "x = 1  # gpu\n")


def _assert_same_comments(a: str, b: str) -> None:
    if _comments(a) != _comments(b):
        raise Failure("comments", "")
