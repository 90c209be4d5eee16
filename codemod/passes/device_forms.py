"""What the device-strings pass writes for a device: an indexed device, and a
comparison with the accelerator, each in its CPU-guarded form and in the form for
code only an accelerator reaches (where the guard is already true); a device string
built from a template.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from codemod.passes.names import bind_arguments
from codemod.passes.device_positions import device_literal

# On an accelerator the device with that index; on the CPU the CPU itself
# (`torch.load` cannot restore storages to "cpu:0").
INDEXED_DEVICE = (
    '{torch}.device({device}.type, {index}) if {device}.type != "cpu" else {device}'
)
# Where only an accelerator gets (`if torch.cuda.is_available():`), without the guard.
ACCELERATOR_INDEXED_DEVICE = "{torch}.device({device}.type, {index})"
# A comparison with "cuda" -> one with the accelerator (never true on the CPU).
COMPARISONS = {
    cst.Equal: '({subject} == {device}.type != "cpu")',
    cst.NotEqual: '({subject} != {device}.type or {device}.type == "cpu")',
    cst.In: '({device}.type != "cpu" and {device}.type in {subject})',
    cst.NotIn: '({device}.type == "cpu" or {device}.type not in {subject})',
}
# Where only an accelerator gets, the device binding is one: a plain comparison
# (one link, as the original: it needs no parentheses of its own).
ACCELERATOR_COMPARISONS = {
    cst.Equal: "{subject} == {device}.type",
    cst.NotEqual: "{subject} != {device}.type",
    cst.In: "{device}.type in {subject}",
    cst.NotIn: "{device}.type not in {subject}",
}


def written_index(literal: cst.BaseExpression):
    """The index of f"{_DEVICE().type}:N" or f"{_DEVICE().type}:{i}" as written here."""
    if not isinstance(literal, cst.FormattedString):
        return None
    parts = literal.parts
    if len(parts) == 2 and isinstance(parts[1], cst.FormattedStringText):
        digits = parts[1].value[len(":") :]
        return cst.Integer(digits) if digits.isdigit() else None
    if (
        len(parts) == 3
        and isinstance(parts[1], cst.FormattedStringText)
        and parts[1].value == ":"
        and isinstance(parts[2], cst.FormattedStringExpression)
        and parts[2].conversion is None
        and parts[2].format_spec is None
    ):
        return parts[2].expression
    return None


def device_arguments(call: cst.Call):
    """(type, index) of ``torch.device(type, index)``, each passed by position or by
    keyword (None where left out); None for another form (``*args``, another
    keyword)."""
    values = bind_arguments(call, ("type", "index"))
    if values is None:
        return None
    return values.get("type"), values.get("index")


def index_of(
    original: cst.Call, updated: cst.Call, device_types
) -> Optional[cst.BaseExpression]:
    """The index of ``torch.device("cuda", i)`` (``index=i``, ``type="cuda"``) or
    ``torch.device("cuda:0")`` as the passes left it (``device_types``: the
    ``_DEVICE().type`` they wrote), else None."""
    found, written = device_arguments(updated), device_arguments(original)
    if found is None or written is None:
        return None
    kind, index = found
    if index is not None:
        return index if kind in device_types else None
    if kind is not None and (device_literal(written[0]) or "").startswith("cuda:"):
        return written_index(kind)
    return None


# The replacement field of a str.format template: "{}", "{rank}", "{0}", "{:d}".
_FORMAT_FIELD = re.compile(r"\{(?P<index>\d*)(?P<rest>[^{}]*)\}")


class DeviceTemplates:
    """The device-strings pass's rewrite of templates that build a device string:
    ``"cuda:{}".format(i)`` and ``"cuda:%d" % i`` (a mixin: it uses the pass's
    ``record_and_decide``, ``expr`` and ``_string_type``)."""

    def _format_call(self, original: cst.Call, updated: cst.Call):
        """ "cuda:{}".format(i) -> "{}:{}".format(_DEVICE().type, i): the device type
        becomes the template's first argument."""
        template = original.func.value  # type: ignore[attr-defined]
        field = _FORMAT_FIELD.search(str(template.evaluated_value))
        if field is None or not self.record_and_decide(template, "TP102"):
            return updated
        index, rest = field.group("index"), field.group("rest")
        if index:  # numbered fields cannot mix with automatic ones: "{0}:{1}"
            text = "{0}:{%d%s}" % (int(index) + 1, rest)
        else:
            text = "{}:{%s}" % rest
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        head = cst.Arg(
            self._string_type(),
            comma=comma if updated.args else cst.MaybeSentinel.DEFAULT,
        )
        return updated.with_changes(
            func=updated.func.with_changes(value=self._quoted(template, text)),
            args=[head, *updated.args],
        )

    def _percent(self, original: cst.BinaryOperation, updated: cst.BinaryOperation):
        """ "cuda:%d" % i -> "%s:%d" % (_DEVICE().type, i)."""
        if not self.record_and_decide(original.left, "TP102"):
            return updated
        text = "%s" + str(original.left.evaluated_value)[len("cuda") :]  # type: ignore
        values = updated.right
        if isinstance(values, cst.Tuple) and not any(
            isinstance(e, cst.StarredElement) for e in values.elements
        ):
            elements = [e.value for e in values.elements]
        else:
            elements = [values]
        right = self.expr(
            "({device}.type, "
            + ", ".join(f"{{v{i}}}" for i in range(len(elements)))
            + ")",
            **{f"v{i}": e for i, e in enumerate(elements)},
        )
        return updated.with_changes(left=self._quoted(original.left, text), right=right)

    @staticmethod
    def _quoted(original: cst.SimpleString, text: str) -> cst.SimpleString:
        """``text`` as a literal with the quotes and prefix of ``original``."""
        quote = original.quote
        if quote in text or "\\" in text:
            return cst.SimpleString(repr(text))
        return cst.SimpleString(original.prefix + quote + text + quote)
