"""The torch.cuda runtime table: every row is exercised by a fixture, and the
claims it makes about CPU PyTorch hold on the torch installed here."""

from __future__ import annotations

import re

import pytest
import torch

from codemod import catalog
from codemod.passes.runtime.shapes import SHAPES, shape_of
from codemod.passes.runtime.tables import API, METHODS
from codemod.rules.runtime import RULES
from codemod.rewrite.pipeline import rewrite_source
from tests.fixture_cases import options_of, rule_fixtures

# The fixtures of the runtime pass's rules (fixtures/TP3xx/).
RUNTIME_FIXTURES = [
    p for p in rule_fixtures() if p.parent.name in {rule.code for rule in RULES}
]
CPU = torch.device("cpu")


def _fixture_text() -> str:
    return "\n".join(p.read_text() for p in RUNTIME_FIXTURES)


def _resolve(template: str):
    """The object a callee template names, with DEVICE the CPU."""
    code = template.replace("{torch}", "torch").replace("{device}", "CPU")
    return eval(code, {"torch": torch, "CPU": CPU})  # noqa: S307 (templates are ours)


def test_every_rewritten_row_has_a_fixture():
    text = _fixture_text()
    missing = [
        name
        for name, row in API.items()
        if row.rewrite not in ("report", "tensor")
        and f".{name.rsplit('.', 1)[1]}(" not in text
    ]
    assert not missing


def test_every_rule_fires_in_some_fixture():
    seen = set()
    for before in RUNTIME_FIXTURES:
        source = before.read_text()
        seen.update(
            d.code for d in rewrite_source(source, options_of(source)).diagnostics
        )
    assert {rule.code for rule in RULES} <= seen


def test_unguarded_replacements_exist_on_the_cpu():
    # A row without a CPU value claims its replacement works without an accelerator.
    for name, row in API.items():
        if row.rewrite == "cuda_kept":  # its portable form is the value elsewhere
            continue
        if row.portable and row.cpu is None and "device_index" not in row.portable:
            assert callable(_resolve(row.portable)), name


def test_guarded_replacements_exist_in_this_torch():
    # Guarded rows call torch.accelerator functions that exist (they raise on the
    # CPU, hence the guard); device-module rows are checked on the CPU module where
    # it has them.
    for name, row in API.items():
        if row.portable and row.portable.startswith("{torch}.accelerator."):
            assert callable(_resolve(row.portable)), name


def test_cpu_values_match_what_torch_cuda_gives_without_a_gpu():
    # The no-op values the guards keep are the ones CPU PyTorch's torch.cuda returns.
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved"):
        assert eval(API[f"torch.cuda.{name}"].cpu) == getattr(torch.cuda, name)() == 0
    assert eval(API["torch.cuda.memory_stats"].cpu) == dict(torch.cuda.memory_stats())


def test_cpu_events_record_but_cannot_time():
    event = torch.cpu.Event()
    event.record()
    event.synchronize()
    assert not hasattr(event, "elapsed_time")


def test_cpu_streams_do_what_the_cpu_values_of_the_stream_forms_need():
    # On the CPU, Stream(), current_stream() and `with stream(s):` are torch.cpu's
    # stand-ins: wait_stream, wait_event, Event().record(stream) all run there.
    module = torch.get_device_module(CPU)
    side = _resolve(API["torch.cuda.Stream"].cpu)
    main = _resolve(API["torch.cuda.current_stream"].cpu)
    side.wait_stream(main)
    side.wait_event(_resolve(API["torch.cuda.Event"].cpu))
    _resolve(API["torch.cuda.Event"].cpu).record(side)
    with _resolve(API["torch.cuda.stream"].portable)(side):
        assert module.current_stream() is side
    assert module.current_stream() is main


def test_torch_streams_and_events_need_the_cpu_guard():
    # What the accelerator side writes raises on the CPU: hence the guard.
    for make in (torch.accelerator.current_stream, torch.accelerator.synchronize):
        with pytest.raises(RuntimeError):
            make()
    with pytest.raises(RuntimeError):
        torch.Stream(CPU).wait_stream(torch.Stream(CPU))
    with pytest.raises(RuntimeError):
        torch.Event(CPU).record()


def test_methods_the_cpu_lacks_are_the_guarded_ones():
    # Emitted behind _DEVICE().type != "cpu": each would raise on the CPU.
    stream = torch.get_device_module(CPU).current_stream()
    assert not hasattr(stream, "synchronize") and not hasattr(stream, "query")
    assert not hasattr(torch.cpu.Event(), "elapsed_time")
    for argument in (stream, torch.Stream(CPU)):
        with pytest.raises((RuntimeError, NotImplementedError)):
            torch.ones(2).record_stream(argument)
    assert {name for name in METHODS} == {
        "elapsed_time",
        "synchronize",
        "query",
        "record_stream",
    }
    assert eval(METHODS["query"].cpu) is True  # CPU work is done when it returns


def test_stream_methods_follow_the_binding():
    source = (
        "import torch\n"
        "def f(x, s):\n"
        "    mine = torch.cuda.current_stream()\n"
        "    mine.synchronize()\n"
        "    s.synchronize()\n"
        "    x.record_stream(s)\n"
        "    x.record_stream(mine)\n"
    )
    code = rewrite_source(source, options_of(source)).code
    guarded = r'if _DEVICE\(\)\.type != "cpu":\s+'
    assert re.search(guarded + r"mine\.synchronize\(\)", code)
    assert re.search(guarded + r"x\.record_stream\(mine\)", code)
    # A parameter is not known to be a stream.
    assert "\n    s.synchronize()" in code and "\n    x.record_stream(s)" in code


def test_every_row_names_a_rewrite_shape():
    # The pass applies SHAPES[row.rewrite]: a name with no shape is an error.
    assert {row.rewrite for row in catalog.rows_of("cuda_runtime")} <= set(SHAPES)
    with pytest.raises(LookupError):
        shape_of("no-such-rewrite")


def _rewritten(body: str, target: str = "2.13") -> tuple:
    source = f"# fixture-options: --target-torch {target}\nimport torch\n{body}"
    result = rewrite_source(source, options_of(source))
    return result.code, [(d.code, d.message) for d in result.diagnostics]


def test_a_stream_entered_by_with_becomes_the_context_manager():
    code, _ = _rewritten(
        "s = torch.cuda.Stream()\nwith torch.cuda.stream(s):\n    pass\n"
    )
    assert 'with s if _DEVICE().type != "cpu" else torch.cpu.stream(s):' in code


@pytest.mark.parametrize(
    "body",
    [
        "def f(s):\n    with torch.cuda.stream(s()):\n        pass\n",  # not a name
        "with torch.cuda.stream(None):\n    pass\n",
        "s = torch.cuda.Stream()\nwith torch.cuda.stream(s) as entered:\n    pass\n",
        "s = torch.cuda.Stream()\ncontext = torch.cuda.stream(s)\n",
    ],
)
def test_a_stream_context_that_is_not_exact_is_reported(body):
    code, diagnostics = _rewritten(body)
    assert "torch.cuda.stream(" in code
    assert any(c == "TP305" and "cannot tell" in m for c, m in diagnostics)


def test_a_stream_handed_in_is_entered_only_where_it_is_one():
    code, _ = _rewritten("def f(s):\n    with torch.cuda.stream(s):\n        pass\n")
    assert 'with s if s is not None and _DEVICE().type != "cpu" else' in code


def test_the_stream_context_needs_torch_2_7():
    body = "s = torch.cuda.Stream()\nwith torch.cuda.stream(s):\n    pass\n"
    assert "torch.cuda.stream(s)" in _rewritten(body, "2.6")[0]
    assert "torch.cuda.stream(s)" not in _rewritten(body, "2.7")[0]


def test_a_module_reading_the_cuda_handle_keeps_its_streams_and_events():
    code, diagnostics = _rewritten(
        "s = torch.cuda.Stream()\nhandle = s.cuda_stream\ne = torch.cuda.Event()\n"
    )
    assert "torch.cuda.Stream()" in code and "torch.Event()" in code
    assert (
        "TP305",
        "`torch.cuda.Stream(...)`: the module names `cuda_stream`, the CUDA handle "
        "a torch.Stream lacks: left as it is",
    ) in diagnostics


@pytest.mark.parametrize(
    "args, emitted",
    [
        ("True", "torch.Event(enable_timing=True)"),
        ("True, False", "torch.Event(enable_timing=True)"),
        ("enable_timing=False, blocking=False", "torch.Event(enable_timing=False)"),
        ("blocking=True", None),
        ("False, False, True", None),
        ("interprocess=flag", None),
    ],
)
def test_event_flags_torch_event_ignores_are_reported(args, emitted):
    # in a function: at import the event would ask for the accelerator early
    code, diagnostics = _rewritten(
        f"flag = True\ndef make():\n    return torch.cuda.Event({args})\n"
    )
    if emitted is None:
        assert f"torch.cuda.Event({args})" in code
        assert any(c == "TP306" and "not honoured" in m for c, m in diagnostics)
    else:
        assert emitted in code


def test_a_stream_priority_given_by_position_is_passed_by_keyword():
    code, _ = _rewritten("s = torch.cuda.Stream(0, -1)\n")
    assert "torch.Stream(0, priority=-1)" in code


def test_the_device_name_is_kept_for_cuda_with_its_import():
    source = (
        "# fixture-options: --unsafe-fixes\n"
        "from torch.cuda import get_device_name\n"
        "print(get_device_name(0))\n"
    )
    code = rewrite_source(source, options_of(source)).code
    assert "from torch.cuda import get_device_name\n" in code
    assert (
        'print(get_device_name(0) if _DEVICE().type == "cuda" else _DEVICE().type)'
        in code
    )
    assert rewrite_source(code, options_of(code)).code == code
