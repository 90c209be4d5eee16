"""TP315-TP317: raising torch.cuda queries in messages and capability tests, and the
bfloat16 check. The table's claims hold on the torch installed here, each form is
rewritten where its value only goes into text (or decides a capability test) and
left to its own rule everywhere else, and the rewritten code runs on the CPU."""

from __future__ import annotations

import logging

import pytest
import torch

from codemod.catalog.queries import BF16_ELSEWHERE, MESSAGE_QUERIES
from codemod.model.options import Options
from codemod.rewrite.pipeline import rewrite_source

HEAD = "import logging\nimport sys\n\nimport torch\n\nlogger = logging.getLogger()\n\n"


def _rewrite(body: str, **options):
    result = rewrite_source(HEAD + body, Options(**options))
    return result, {d.code for d in result.diagnostics}


@pytest.mark.parametrize("name", sorted(MESSAGE_QUERIES))
def test_every_message_query_raises_without_cuda(name):
    # The premise of the fix: the original raised here, so naming the device is new
    # only where the program used to stop.
    query = getattr(torch.cuda, name.rsplit(".", 1)[1])
    with pytest.raises(Exception):
        query()


@pytest.mark.parametrize(
    "name", ["memory_allocated", "memory_stats", "list_gpu_processes", "get_arch_list"]
)
def test_queries_that_answer_without_cuda_are_not_in_the_table(name):
    getattr(torch.cuda, name)()  # answers 0, {}, a sentence or []: not raising
    assert f"torch.cuda.{name}" not in MESSAGE_QUERIES


KEPT = 'if _DEVICE().type == "cuda" else _DEVICE().type'
FIELDS = [
    'print(f"GPU {torch.cuda.get_device_name(0)}")',
    'print(f"GPU {torch.cuda.get_device_name(0)!r}", file=sys.stderr)',
    'print("GPU", torch.cuda.get_device_name(0), sep=": ")',
    'logger.info("mem %s", torch.cuda.mem_get_info())',
    'logger.log(logging.INFO, "cap %r", torch.cuda.get_device_capability())',
    'logging.warning("%s: %.1f%%", torch.cuda.memory_summary(), 5.0)',
    'print(f"{torch.cuda.get_device_properties(0).name}")',
    'print(f"{torch.cuda.mem_get_info()[1]} bytes")',
]


@pytest.mark.parametrize("line", FIELDS)
def test_a_query_that_only_goes_into_text_is_kept_for_cuda(line):
    # In a function the import does not call: a read at import where the original
    # asked no device (memory_summary asks none) would be an unsafe fix.
    result, codes = _rewrite(f"def report():\n    {line}\n")
    assert "TP315" in codes
    assert {"TP314", "TP309", "TP390", "TP903"}.isdisjoint(codes)
    fixed = result.code
    assert KEPT in fixed or KEPT.replace('"', "'") in fixed
    # runs on the CPU, where the original raised
    namespace = {"__name__": "fixed"}
    exec(compile(fixed, "<fixed>", "exec"), namespace)  # noqa: S102
    namespace["report"]()
    assert rewrite_source(fixed, Options()).code == fixed  # a fixed point


def test_the_literal_text_is_byte_identical():
    line = 'print(f"CUDA device: {torch.cuda.get_device_name(0)} (cuda)")\n'
    fixed = _rewrite(line)[0].code
    assert 'f"CUDA device: {' in fixed and '} (cuda)"' in fixed


NOT_FIELDS = [
    ('print(f"{torch.cuda.get_device_name(0):>12}")', "TP314"),  # a format spec
    ('print(f"{torch.cuda.get_device_name(0)=}")', "TP314"),  # writes its text
    ("name = torch.cuda.get_device_name(0)", "TP314"),  # a value kept
    ('logger.info("free %d", torch.cuda.mem_get_info()[0])', "TP309"),  # %d
    ('logger.info("%(n)s", {"n": torch.cuda.memory_summary()})', "TP390"),
    ("print(len(torch.cuda.get_device_name(0)))", "TP314"),  # computed on
    ("print(f\"{f'{torch.cuda.get_device_name(0)}'}\")", "TP314"),  # nested f-string
]


@pytest.mark.parametrize("line, own", NOT_FIELDS)
def test_a_query_whose_value_does_more_stays_with_its_rule(line, own):
    result, codes = _rewrite(line + "\n")
    assert "TP315" not in codes and own in codes
    assert result.code == HEAD + line + "\n"


def test_a_query_under_a_kept_cuda_only_guard_is_left_alone():
    body = (
        "if torch.cuda.is_available():\n"
        '    torch.cuda.nvtx.range_push("x")\n'
        '    print(f"GPU {torch.cuda.get_device_name(0)}")\n'
    )
    result, codes = _rewrite(body)
    assert "TP315" not in codes and "TP910" in codes
    assert 'print(f"GPU {torch.cuda.get_device_name(0)}")' in result.code


def test_a_guard_whose_body_only_printed_the_query_is_widened():
    body = "if torch.cuda.is_available():\n    print(torch.cuda.get_device_name(0))\n"
    result, codes = _rewrite(body)
    assert "if torch.accelerator.is_available():" in result.code
    assert codes == {"TP301", "TP315"}


def test_a_suppressed_site_is_its_own_rules_again():
    line = 'print(f"GPU {torch.cuda.get_device_name(0)}")  # noqa: TP315\n'
    result, codes = _rewrite(line)
    assert "TP315" not in codes and "TP314" in codes


CAPABILITY = [
    ("if torch.cuda.get_device_capability() >= (8, 0):\n    x = 1\n", "if _DEVICE"),
    ("x = torch.cuda.get_device_capability()[0] >= 8\n", "x = _DEVICE"),
    ("x = not torch.cuda.get_device_properties(0).major < 8\n", "not (_DEVICE"),
    (
        "if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:"
        "\n    x = 1\n",
        "if torch.accelerator.is_available() and (",
    ),
]


@pytest.mark.parametrize("body, written", CAPABILITY)
def test_a_capability_test_is_false_elsewhere(body, written):
    result, codes = _rewrite(body)
    assert "TP316" in codes and "TP903" not in codes
    assert written in result.code
    namespace = {"__name__": "fixed"}
    exec(compile(result.code, "<fixed>", "exec"), namespace)  # noqa: S102
    assert namespace.get("x", 0) in (0, False, True)
    assert rewrite_source(result.code, Options()).code == result.code


def test_an_unpacked_capability_stays_reported():
    line = "major, minor = torch.cuda.get_device_capability()\n"
    result, codes = _rewrite(line)
    assert "TP903" in codes and "TP316" not in codes
    assert result.code == HEAD + line


def test_the_bf16_check_is_an_unsafe_fix():
    line = "dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else None\n"
    result, codes = _rewrite(line)
    assert "TP317" in codes and "TP903" not in codes and result.code == HEAD + line
    fixed, _ = _rewrite(line, unsafe_fixes=True)
    assert "torch.get_autocast_dtype(_DEVICE().type) == torch.bfloat16" in fixed.code
    namespace = {"__name__": "fixed"}
    exec(compile(fixed.code, "<fixed>", "exec"), namespace)  # noqa: S102
    assert namespace["dtype"] is None  # False on the CPU, as torch.cuda answers
    assert rewrite_source(fixed.code, Options(unsafe_fixes=True)).code == fixed.code


def test_the_bf16_answer_elsewhere_is_the_autocast_dtype():
    # torch.get_autocast_dtype takes a device type string (torch >= 2.4).
    code = BF16_ELSEWHERE.format(torch="torch", device="DEVICE")
    assert eval(code, {"torch": torch, "DEVICE": torch.device("cpu")}) is False
    assert torch.get_autocast_dtype("cpu") is torch.bfloat16
    assert torch.get_autocast_dtype("cuda") is torch.float16
