"""Where a ``torch.cuda`` query that raises without CUDA can be ported exactly.

- A *message field*: its value only goes into text. An f-string field without a
  format spec or ``=`` (``f"GPU {torch.cuda.get_device_name(0)}"``), a positional
  argument of ``print()``, or an argument of a logging call that its message's
  ``%s``/``%r``/``%a`` formats (``logger.info("mem %s", torch.cuda.mem_get_info())``).
  The query may be followed by attributes and constant subscripts
  (``get_device_properties(0).name``, ``mem_get_info()[0]``): the whole chain is
  the field's value.
- A *capability test*: a comparison that reads ``get_device_capability()`` (or an
  element of it) or ``get_device_properties(i).major``/``.minor``.

The queries pass ports them; the checks that decide whether code stays CUDA-only
(``cuda_only_code``, ``kept_for_cuda``, ``availability``) do not count them, as the
port no longer needs CUDA there. Plain functions of libcst nodes.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, Iterator, List, Optional, Set

import libcst as cst

from codemod.catalog.queries import CAPABILITY, MESSAGE_QUERIES, PROPERTIES, SM_FIELDS
from codemod.passes.names import dotted_name

QualifiedName = Callable[[cst.CSTNode], Optional[str]]

LOG_METHODS = {
    "debug",
    "info",
    "warning",
    "warn",
    "error",
    "critical",
    "exception",
    "fatal",
}
# One %-format of a logging message: mapping key, flags, width, precision, type.
_PERCENT = re.compile(
    r"%(\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%])"
)
TEXT_TYPES = "rsa"


def query_call(node: cst.CSTNode, qualified_name: QualifiedName) -> Optional[cst.Call]:
    """The query of a chain ``Q(...)``, ``Q(...).attr``, ``Q(...)[0]`` whose head is
    a message query; None for anything else."""
    while True:
        if isinstance(node, cst.Attribute):
            node = node.value
        elif isinstance(node, cst.Subscript) and _constant_index(node):
            node = node.value
        else:
            break
    if not isinstance(node, cst.Call) or any(a.star for a in node.args):
        return None
    return node if qualified_name(node.func) in MESSAGE_QUERIES else None


def _constant_index(node: cst.Subscript) -> bool:
    return len(node.slice) == 1 and isinstance(
        getattr(node.slice[0].slice, "value", None), (cst.Integer, cst.SimpleString)
    )


def message_fields(
    root: cst.CSTNode, qualified_name: QualifiedName
) -> Dict[cst.BaseExpression, cst.Call]:
    """Each chain of ``root`` whose value only goes into text -> its query call."""
    found: Dict[cst.BaseExpression, cst.Call] = {}
    for value in _text_values(root, qualified_name):
        call = query_call(value, qualified_name)
        if call is not None:
            found[value] = call
    return found


def _text_values(root: cst.CSTNode, qualified_name) -> Iterator[cst.BaseExpression]:
    in_spec: Set[cst.CSTNode] = set()  # a field of a format spec formats, not text
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.children))
        if node in in_spec:
            continue
        if isinstance(node, cst.FormattedStringExpression):
            if node.format_spec:
                in_spec.update(_below(node.format_spec))
            elif node.equal is None:  # `{x=}` writes the expression's text too
                yield node.expression
        elif isinstance(node, cst.Call):
            yield from printed_arguments(node, qualified_name)


def _below(parts) -> Iterator[cst.CSTNode]:
    stack = list(parts)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children)


def printed_arguments(call: cst.Call, qualified_name) -> List[cst.BaseExpression]:
    """The arguments of ``call`` that only go into text: ``print``'s positional
    ones, and those of a logging call that its literal message formats as text."""
    func = call.func
    args = call.args
    if any(a.star for a in args):
        return []
    if isinstance(func, cst.Name) and func.value == "print":
        if qualified_name(func) is None:  # not imported as something else
            return [a.value for a in args if a.keyword is None]
        return []
    if not isinstance(func, cst.Attribute) or not _is_logger(func, qualified_name):
        return []
    positional = [a.value for a in args if a.keyword is None]
    first = 1 if func.attr.value == "log" else 0  # log(level, msg, *args)
    if len(positional) <= first + 1:
        return []
    types = _formats(positional[first])
    values = positional[first + 1 :]
    if types is None or len(types) != len(values):
        return []
    return [v for v, t in zip(values, types) if t in TEXT_TYPES]


def _is_logger(func: cst.Attribute, qualified_name) -> bool:
    """``logging.info``, ``logger.warning``, ``self.log.error``, ``log.log``."""
    method = func.attr.value
    if method not in LOG_METHODS and method != "log":
        return False
    name = qualified_name(func) or ""
    if name.startswith("logging."):
        return True
    receiver = dotted_name(func.value)
    return bool(receiver) and "log" in receiver.rsplit(".", 1)[-1].lower()


def _formats(message: cst.BaseExpression) -> Optional[List[str]]:
    """The conversion types of a literal %-message, in order; None when it is no
    literal or uses mapping keys or ``*`` widths."""
    if not isinstance(message, (cst.SimpleString, cst.ConcatenatedString)):
        return None
    text = message.evaluated_value
    if not isinstance(text, str):
        return None
    types = []
    for match in _PERCENT.finditer(text):
        key, width, precision, kind = match.groups()
        if kind == "%":
            continue
        if key is not None or "*" in (width, precision):
            return None
        types.append(kind)
    return types


def capability_read(
    node: cst.CSTNode, qualified_name: QualifiedName
) -> Optional[cst.CSTNode]:
    """``node`` when it reads a compute capability: ``get_device_capability()``,
    an element of it, or ``get_device_properties(i).major``/``.minor``."""
    head = node
    if isinstance(head, cst.Subscript) and _constant_index(head):
        head = head.value
    if isinstance(head, cst.Call) and qualified_name(head.func) == CAPABILITY:
        return node
    if (
        isinstance(node, cst.Attribute)
        and node.attr.value in SM_FIELDS
        and isinstance(node.value, cst.Call)
        and qualified_name(node.value.func) == PROPERTIES
    ):
        return node
    return None


def capability_tests(
    root: cst.CSTNode, qualified_name: QualifiedName
) -> Iterator[cst.Comparison]:
    """The comparisons of ``root`` that read a compute capability."""
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.children))
        if isinstance(node, cst.Comparison) and reads_capability(node, qualified_name):
            yield node


def reads_capability(node: cst.Comparison, qualified_name) -> bool:
    """Whether a side of the comparison reads a compute capability."""
    sides = [node.left, *(c.comparator for c in node.comparisons)]
    return any(capability_read(s, qualified_name) is not None for s in sides)


def ported_queries(
    root: cst.CSTNode, qualified_name: QualifiedName
) -> Set[cst.CSTNode]:
    """The nodes of the message fields and capability tests in ``root``, with
    everything below them: the queries pass ports them, so they need no CUDA."""
    found: Set[cst.CSTNode] = set()
    for value in message_fields(root, qualified_name):
        found.update(_below([value]))
    for test in capability_tests(root, qualified_name):
        found.update(_below([test]))
    return found
