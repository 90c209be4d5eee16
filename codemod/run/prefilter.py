"""The byte prefilter: whether a file's bytes can hold a site at all.

Most files of a project mention no CUDA. A byte search for the catalogue's
triggers settles them without decoding, parsing or importing libcst; only the
files it lets through reach a rewrite.
"""

from __future__ import annotations

import re
from typing import List, Tuple

from codemod import catalog


class Prefilter:
    """Whether bytes match any of the triggers, as ``re`` says, found faster.

    ``re`` tries each alternative of a pattern at each position; ``bytes in`` finds
    one word at memchr speed. Each trigger is searched for by the word every match
    of it contains; only a trigger that is more than its word (``\\bamp\\b``) runs
    its pattern, and only where its word occurs.
    """

    def __init__(self, triggers) -> None:
        self.pattern = re.compile("|".join(triggers).encode())  # the plain way
        words, checked = [], []
        for trigger in triggers:
            word, exact = _required_word(trigger)
            if exact:
                words.append(word.encode())
            else:
                checked.append((word.encode(), re.compile(trigger.encode())))
        # A trigger whose word holds a plain trigger's word adds nothing.
        self.words = tuple(
            w for w in words if not any(o != w and o in w for o in words)
        )
        self.checked = tuple(
            (word, pattern)
            for word, pattern in checked
            if not any(plain in word for plain in self.words)
        )

    def matches(self, data: bytes) -> bool:
        for word in self.words:
            if word in data:
                return True
        for word, pattern in self.checked:
            if word in data and pattern.search(data):
                return True
        return False


def _required_word(trigger: str) -> Tuple[str, bool]:
    """The longest run of characters every match of ``trigger`` contains, and whether
    the trigger is just that run. Triggers are words with escaped punctuation, ``\\b``
    and ``?``; anything else is refused, so that the run is never wrong."""
    runs: List[str] = [""]
    exact = True
    index = 0
    while index < len(trigger):
        char = trigger[index]
        if char == "\\" and index + 1 < len(trigger):
            following = trigger[index + 1]
            index += 2
            if not following.isalnum():
                runs[-1] += following  # an escaped punctuation mark
            elif following == "b":  # a word boundary: no character of its own
                exact = False
                runs.append("")
            else:
                raise ValueError(f"trigger {trigger!r}: escape \\{following}")
            continue
        if char == "?":  # the character before is optional
            exact = False
            runs[-1] = runs[-1][:-1]
            runs.append("")
        elif char in ".^$*+{}[]()|\\":
            raise ValueError(f"trigger {trigger!r}: {char!r} is not understood here")
        else:
            runs[-1] += char
        index += 1
    word = max(runs, key=len)
    if not word:
        raise ValueError(f"trigger {trigger!r} holds no word")
    return word, exact


# Whatever any pass TRIGGER matches, as bytes: derived from the catalogue.
PREFILTER = Prefilter(catalog.triggers())

# `# torchport: skip-file` on a line of its own (in a notebook, at the start of a
# JSON source string) leaves the whole file alone.
SKIP_FILE = re.compile(rb'^[ \t]*"?#[ \t]*torchport:[ \t]*skip-file\b', re.MULTILINE)


def needs_parsing(data: bytes) -> bool:
    mentions = PREFILTER.matches(data)
    if not mentions and b"\x00" in data:  # UTF-16 or UTF-32 text: say it cannot be read
        mentions = PREFILTER.matches(data.replace(b"\x00", b""))
    return mentions and SKIP_FILE.search(data) is None
