"""Events and streams kept in lists and tuples (codemod/passes/runtime/containers.py):
a method of an element is rewritten only where the list provably holds nothing else
when it is read; every other form stays as written, and `elapsed_time` reported."""

from __future__ import annotations

import textwrap

import pytest

from codemod.rewrite.pipeline import rewrite_source
from tests.fixture_cases import options_of

GUARDED = 'if _DEVICE().type != "cpu" else float("nan")'
EVENTS = "[torch.cuda.Event(enable_timing=True) for _ in range(n)]"


def _timed(body: str) -> tuple:
    """Whether the one elapsed_time in ``body`` (a function of ``n``) is guarded,
    and whether it is reported."""
    source = "import torch\n\n\ndef f(n):\n" + textwrap.indent(body, "    ")
    result = rewrite_source(source, options_of(source))
    reported = any(d.code == "TP307" and not d.applied for d in result.diagnostics)
    return GUARDED in result.code, reported


@pytest.mark.parametrize(
    "body",
    [
        f"s, e = {EVENTS}, {EVENTS}\nreturn [a.elapsed_time(b) for a, b in zip(s, e)]\n",
        f"s = {EVENTS}\nfor a in s:\n    t = s[0].elapsed_time(a)\n",
        f"s = {EVENTS}\nreturn {{i: a.elapsed_time(s[0]) for i, a in enumerate(s)}}\n",
        f"s = {EVENTS}\nreturn [a.elapsed_time(s[0]) for a in reversed(s[1:])]\n",
        f"s = {EVENTS}\nfirst, second = s\nreturn first.elapsed_time(second)\n",
        "s = []\nfor _ in range(n):\n    ev = torch.cuda.Event(enable_timing=True)\n"
        "    s.append(ev)\nreturn s[0].elapsed_time(s[-1])\n",
        "t = [torch.cuda.Event(enable_timing=True), torch.cuda.Event()]\n"
        "return t[0].elapsed_time(t[1])\n",
        f"s = {EVENTS}\nn = len(s)\ns[0] = torch.cuda.Event(enable_timing=True)\n"
        "return s[0].elapsed_time(s[1])\n",
        f"s = {EVENTS}\n\ndef total():\n"
        "    return sum(a.elapsed_time(b) for a, b in zip(s, s[1:]))\n\nreturn total()\n",
    ],
)
def test_an_element_of_a_list_kept_here_is_timed(body):
    assert _timed(body) == (True, False)


@pytest.mark.parametrize(
    "body",
    [
        # passed to a function, returned, aliased, stored: anything may be in it
        f"s = {EVENTS}\nfill(s)\nreturn s[0].elapsed_time(s[1])\n",
        f"s = {EVENTS}\nt = s\nt.append(0)\nreturn s[0].elapsed_time(s[1])\n",
        f"s = {EVENTS}\nx = s[0].elapsed_time(s[1])\nreturn s\n",
        f"s = {EVENTS}\ns.extend(more)\nreturn s[0].elapsed_time(s[1])\n",
        f"s = t = {EVENTS}\nt.append(0)\nreturn s[0].elapsed_time(s[1])\n",
        f"t = (s := {EVENTS})\nt.append(0)\nreturn s[0].elapsed_time(s[1])\n",
        # rebound, or given something else
        f"s = {EVENTS}\ns = sorted(s)\nreturn s[0].elapsed_time(s[1])\n",
        f"s = {EVENTS}\ns.append(timer)\nreturn [a.elapsed_time(s[0]) for a in s]\n",
        f"s = {EVENTS}\ns[0] = timer\nreturn s[0].elapsed_time(s[1])\n",
        f"s = {EVENTS}\ns += more\nreturn s[0].elapsed_time(s[1])\n",
        "s = [torch.cuda.Event(enable_timing=True), timer]\n"
        "return s[0].elapsed_time(s[1])\n",
        # filled from a closure with its own names
        f"s = {EVENTS}\n\ndef add():\n    ev = timer\n    s.append(ev)\n\n"
        "return s[0].elapsed_time(s[1])\n",
        f"s = {EVENTS}\n\ndef again():\n    nonlocal s\n    s = [timer]\n\n"
        "return s[0].elapsed_time(s[1])\n",
        # a name the comprehension binds itself, or a lambda's parameter
        "a = torch.cuda.Event(enable_timing=True)\n"
        "return [a.elapsed_time(a) for a in timers]\n",
        f"s = {EVENTS}\nreturn [(lambda a: a.elapsed_time(a))(t) for a in s]\n",
        f"a = {EVENTS}\nreturn [e.elapsed_time(e) for a in [timers] for e in a]\n",
        # a shadowed builtin
        f"s = {EVENTS}\nzip = pairs\nreturn [a.elapsed_time(b) for a, b in zip(s, s)]\n",
    ],
)
def test_a_list_that_may_hold_anything_stays_reported(body):
    assert _timed(body) == (False, True)


def _module(source: str) -> tuple:
    source = textwrap.dedent(source)
    result = rewrite_source(source, options_of(source))
    reported = any(d.code == "TP307" and not d.applied for d in result.diagnostics)
    return GUARDED in result.code, reported


def test_a_module_level_list_is_followed_where_every_line_naming_it_is_read():
    source = """\
        import torch

        starts = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        for i in range(3):
            starts[i].record()
            ends[i].record()
        torch.cuda.synchronize()
        print([s.elapsed_time(e) for s, e in zip(starts, ends)])
        """
    assert _module(source) == (True, False)
    # A statement torchport does not parse could put anything in the list.
    hidden = source.replace("torch.cuda.synchronize()", "fill(starts)")
    assert _module(hidden) == (False, True)


def test_streams_in_a_list_are_synchronized_on_an_accelerator_only():
    source = textwrap.dedent("""\
        import torch

        streams = [torch.cuda.Stream() for _ in range(2)]
        for s in streams:
            s.synchronize()
        """)
    code = rewrite_source(source, options_of(source)).code
    assert 'if _DEVICE().type != "cpu":\n        s.synchronize()' in code
