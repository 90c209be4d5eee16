"""The byte prefilter must let through every file a pass could rewrite."""

from __future__ import annotations

import re

import pytest

from codemod.run.prefilter import PREFILTER
from codemod.passes import PASSES


def _words(pattern: str):
    """The literal alternatives of a trigger pattern (``cuda|\\bamp\\b`` -> cuda, amp)."""
    for part in pattern.split("|"):
        word = part.replace("\\b", "").replace("\\.", ".")
        if re.fullmatch(r"[\w. ]+", word):
            yield word


@pytest.mark.parametrize("pass_class", PASSES, ids=lambda p: p.__name__)
def test_every_trigger_word_passes_the_prefilter(pass_class):
    words = list(_words(pass_class.TRIGGER.pattern))
    assert words, f"{pass_class.__name__}: no literal trigger words found"
    for word in words:
        assert PREFILTER.matches(word.encode()), f"{pass_class.__name__}: {word!r}"


def test_a_file_without_cuda_code_is_skipped():
    assert not PREFILTER.matches(b"import torch\nx = torch.ones(2).to('cpu')\n")


# Words around each trigger's edges: inside other words, at line ends, with punctuation.
_NEAR_MISSES = [
    b"example = 1",
    b"timestamp(amp)",
    b"amp",
    b"x.amp_level",
    b"from torch import amp",
    b"_amp = 2",
    b"camp.cu",
    b"kernel.cuh",
    b"kernel.cub",
    b"a.cu_b",
    b"a .cu",
    b"get_device (x)",
    b"get_device(x)",
    b"Cuda",
    b"cuDNN",
    b"reduce_overhead",
    b"reduce-overhead",
    b"elapsed time",
    b"is_cud",
]


def test_the_prefilter_agrees_with_its_regex():
    from pathlib import Path

    samples = list(_NEAR_MISSES)
    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    samples += [p.read_bytes() for p in sorted(fixtures.rglob("*.py"))]
    for data in samples:
        expected = PREFILTER.pattern.search(data) is not None
        assert PREFILTER.matches(data) == expected, data[:80]
    assert not PREFILTER.matches(b"example = timestamp")
    assert PREFILTER.matches(b"x = amp.autocast")


@pytest.mark.parametrize(
    "trigger, word, exact",
    [
        ("cuda", "cuda", True),
        (r"get_device\(", "get_device(", True),
        (r"\bamp\b", "amp", False),
        (r"\.cuh?\b", ".cu", False),
        ("reduce-overhead", "reduce-overhead", True),
    ],
)
def test_the_word_each_trigger_needs(trigger, word, exact):
    from codemod.run.prefilter import _required_word

    assert _required_word(trigger) == (word, exact)


@pytest.mark.parametrize("trigger", [r"cu\w+", "cu(da)", "a|b", "cu.a", r"\b"])
def test_triggers_beyond_words_are_refused(trigger):
    from codemod.run.prefilter import _required_word

    with pytest.raises(ValueError):
        _required_word(trigger)
