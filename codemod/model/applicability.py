"""Whether a site's fix is applied: the one decision every pass and the summary use.

A site is shown when its rule is selected and no ``# noqa`` suppresses it. Its fix
is applied when the fix is safe (or unsafe and ``--unsafe-fixes`` was given) and the
target torch has what the fix writes; otherwise the message says why not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from codemod.model.options import Options
from codemod.model.rule import Fix, Rule, TorchVersion, format_version


@dataclass(frozen=True)
class Decision:
    shown: bool  # the rule is selected and the site is not suppressed
    apply: bool  # the fix is applied
    note: str = ""  # added to the message: why a fix is not applied
    unsafe_available: bool = False  # --unsafe-fixes would apply it
    # The release its fix needs where the target torch is older: a site the
    # declared floor keeps CUDA-only.
    needs_torch: Optional[TorchVersion] = None


HIDDEN = Decision(shown=False, apply=False)


def decide(
    rule: Rule,
    options: Options,
    *,
    suppressed: bool = False,
    fix: Optional[Fix] = None,
    min_torch: Optional[TorchVersion] = None,
) -> Decision:
    """The decision for one site of ``rule``.

    ``fix`` overrides the rule's fix kind for this site (a site can be less safe
    than the rule's usual case, or have no fix at all); ``min_torch`` is the release
    this site's fix needs when it is not the rule's (a catalogue row's own).
    """
    if suppressed or not options.selection.enabled(rule.code):
        return HIDDEN
    fix = fix or rule.fix
    needs = min_torch or rule.min_torch
    allowed = fix is Fix.SAFE or (fix is Fix.UNSAFE and options.unsafe_fixes)
    too_new = bool(needs) and needs > options.target_torch
    if too_new and fix in (Fix.SAFE, Fix.UNSAFE):  # no flag would apply it
        return Decision(
            True,
            False,
            f" (the fix needs torch >= {format_version(needs)};"
            f" target is {format_version(options.target_torch)})",
            needs_torch=needs,
        )
    if fix is Fix.UNSAFE and not allowed:
        return Decision(
            True,
            False,
            " (unsafe fix available with --unsafe-fixes)",
            unsafe_available=True,
        )
    return Decision(True, allowed)
