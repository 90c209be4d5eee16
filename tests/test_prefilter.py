"""The byte prefilter must let through every file a pass could rewrite."""

from __future__ import annotations

import re

import pytest

from codemod.engine import PREFILTER
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
        assert PREFILTER.search(word.encode()), f"{pass_class.__name__}: {word!r}"


def test_a_file_without_cuda_code_is_skipped():
    assert not PREFILTER.search(b"import torch\nx = torch.ones(2).to('cpu')\n")
