"""Where a literal means a device: the positions PyTorch takes a device in, and what
it takes there (``Kind``: a device string, a ``torch.device``, a ``map_location``);
which literals are CUDA device strings (``"cuda"``, ``"cuda:N"``, ``f"cuda:{i}"``) or
device templates (``"cuda:{}"``, ``"cuda:%d"``); which names say they hold a device
or a device index.

The device-strings pass (``codemod.passes.device_strings``) classifies each literal
by its position with these tables on the way down, and rewrites it on the way up.
"""

from __future__ import annotations

import enum
import re
from typing import Dict, Optional, Pattern, Set, Tuple, Union

import libcst as cst

from codemod.catalog.amp import AMP_DEVICE_ARGUMENTS

# Device types of other backends, as strings and as tensor attributes.
OTHER_DEVICES = frozenset(
    {"mps", "xpu", "tpu", "npu", "hpu", "xla", "mtia", "musa", "privateuseone"}
)
_DEVICE_LITERAL = re.compile(r"cuda(:\d+)?")
# "cuda:{}".format(i), "cuda:%d" % i: a device string built from a template.
DEVICE_TEMPLATE = re.compile(r"cuda:(\{[^{}]*\}|%[dis])")
# Calls whose arguments are messages: a "cuda:%d" % rank printed or logged is text.
MESSAGE_CALLS = frozenset(
    "print info debug warning warn error exception critical log write".split()
)
# Names that hold a device index (`LOCAL_RANK`, `--gpu`): `.to(gpu_id)` and
# `device=rank` mean the CUDA device with that index, which raises on the CPU.
INDEX_NAME = re.compile(r"(^|_)(rank|gpu|gpu_id|gpu_idx)$")


class Kind(enum.Enum):
    STRING = "string"  # a device string is expected: _DEVICE().type
    OBJECT = "object"  # a torch.device is accepted: _DEVICE()
    IGNORE = "ignore"  # not a device (dict key, subscript) or handled by the parent
    TEMPLATE = "template"  # "cuda:{}" formatted into a device string
    MESSAGE = "message"  # printed or logged text, not a device
    LOCATION = "location"  # map_location: "cuda:N" must not become "cpu:N"
    AMP = "amp"  # an AMP device type: the accelerator's, else CUDA's (passes.amp_forms)


# Callee (qualified name) -> positional index and what it accepts there. Data, not code.
DEVICE_POSITIONS: Dict[str, Tuple[int, Kind]] = {
    "torch.device": (0, Kind.STRING),
    "torch.set_default_device": (0, Kind.OBJECT),
    "torch.load": (1, Kind.LOCATION),
    "torch.get_device_module": (0, Kind.OBJECT),
    "torch.Stream": (0, Kind.OBJECT),
    "torch.Event": (0, Kind.OBJECT),
    "torch.Generator": (0, Kind.OBJECT),
    "torch.distributed.get_default_backend_for_device": (0, Kind.OBJECT),
    "torch.distributed.device_mesh.init_device_mesh": (0, Kind.STRING),
    "torch.distributed._tensor.device_mesh.init_device_mesh": (0, Kind.STRING),
    "torch.distributed.device_mesh.DeviceMesh": (0, Kind.STRING),
}
DEVICE_POSITIONS.update(
    (callee, (position, Kind.AMP))
    for callee, (position, _) in AMP_DEVICE_ARGUMENTS.items()
    if position >= 0
)
# Method name -> positional index (any receiver: `.to` is PyTorch's convention).
DEVICE_METHODS: Dict[str, Tuple[int, Kind]] = {"to": (0, Kind.OBJECT)}
# Keyword -> what it takes, for torch callees; elsewhere every device is a string.
DEVICE_KEYWORDS: Dict[str, Kind] = {
    "device": Kind.OBJECT,
    "map_location": Kind.LOCATION,
    "device_type": Kind.STRING,
}


Literal = Union[cst.SimpleString, cst.FormattedString]


def device_literal(node: cst.CSTNode) -> Optional[str]:
    """'cuda', 'cuda:N' or 'cuda:{}' (an f-string) when ``node`` is such a literal."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        if isinstance(value, str) and _DEVICE_LITERAL.fullmatch(value):
            return value
    elif isinstance(node, cst.FormattedString) and node.parts:
        first = node.parts[0]
        if (
            isinstance(first, cst.FormattedStringText)
            and first.value == "cuda:"
            and len(node.parts) > 1
        ):
            return "cuda:{}"
    return None


def location_index(node: Literal) -> Optional[cst.BaseExpression]:
    """The index of "cuda:N" or f"cuda:{i}"; None for other f-strings."""
    if isinstance(node, cst.SimpleString):
        return cst.Integer(str(node.evaluated_value)[len("cuda:") :])
    if len(node.parts) == 2 and isinstance(
        node.parts[1], cst.FormattedStringExpression
    ):
        field = node.parts[1]
        if field.conversion is None and field.format_spec is None:
            return field.expression
    return None


def is_cpu_literal(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.SimpleString) and node.evaluated_value == "cpu"


def device_list(node: cst.CSTNode) -> Optional[list]:
    """The "cuda" literals of a list of device strings (``["cpu", "cuda"]``, or
    lists added up: ``["cpu"] + ["cuda"]``); None for anything else."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        left, right = device_list(node.left), device_list(node.right)
        return None if left is None or right is None else left + right
    if not isinstance(node, (cst.List, cst.Tuple)):
        return None
    found = []
    for element in node.elements:
        value = element.value
        if device_literal(value) == "cuda":
            found.append(value)
        elif not is_cpu_literal(value):
            return None
    return found


def gated_device_list(node: cst.CSTNode, qualified_name) -> Optional[list]:
    """The "cuda" literals of ``["cpu"] + ["cuda"] if torch.cuda.is_available() else
    []`` (the devices there are, CUDA among them where it is); None otherwise."""
    if not (isinstance(node, cst.IfExp) and isinstance(node.test, cst.Call)):
        return None
    if qualified_name(node.test.func) != "torch.cuda.is_available":
        return None
    if device_list(node.orelse) != []:
        return None
    return device_list(node.body)


def is_index_name(node: cst.CSTNode, int_options=()) -> bool:
    """``rank``, ``gpu_id``, ``self.gpu_id``, ``args.local_rank``, or an argparse
    option of ``type=int`` (``args.device``)."""
    if isinstance(node, cst.Attribute):
        if node.attr.value in int_options:
            return True
        node = node.attr
    return isinstance(node, cst.Name) and bool(INDEX_NAME.search(node.value))


# Names that hold a device index in real code: `.cuda(rank)`, `.cuda(args.gpu)`.
_INDEX_VALUE = re.compile(r"(^|_)(rank|gpu|gpu_id|device_id|dev_id|idx|index|i)$")


def is_index_value(value: cst.BaseExpression, int_options=()) -> bool:
    """An int literal, a name that says it is an index, or an int option (``args.gpu``
    of ``type=int``); else it might be a torch.device, which
    `torch.device(_DEVICE().type, x)` would reject."""
    name = value.attr.value if isinstance(value, cst.Attribute) else None
    if isinstance(value, cst.Integer) or name in int_options:
        return True
    name = value.value if isinstance(value, cst.Name) else name
    return bool(name and _INDEX_VALUE.search(name))


def mentions_device(name: str) -> bool:
    return "device" in name.lower()


CURRENT_DEVICE = "torch.cuda.current_device"
# `dev = torch.cuda.current_device()`: `dev` holds an int, a device index.
_CURRENT_INDEX = re.compile(r"(\w+)\s*=\s*(?:\w+\.)*cuda\.current_device\(\)")


_ADD_ARGUMENT = re.compile(r"\badd_argument\(")
_OPTION = re.compile(r"""\s*(['"])(-{1,2}[A-Za-z][\w-]*)\1\s*(?:,|\Z)""")
_DEST = re.compile(r"""\bdest\s*=\s*(['"])(\w+)\1""")
_INT_TYPE = re.compile(r"\btype\s*=\s*int\b")


def int_options(source: str) -> Set[str]:
    """The dests of ``parser.add_argument("--gpu-id", type=int)`` options
    (``gpu_id``): ``args.gpu_id`` is an int, which as a device means an index."""
    found: Set[str] = set()
    if "type=int" not in source.replace(" ", ""):
        return found
    for match in _ADD_ARGUMENT.finditer(source):
        call = _parenthesized(source, match.end())
        if not _INT_TYPE.search(call):
            continue
        dest = _DEST.search(call)
        names, position = [], 0
        while True:  # the option strings it starts with: --gpu-id -> gpu_id
            option = _OPTION.match(call, position)
            if option is None:
                break
            names.append(option.group(2))
            position = option.end()
        long = [n for n in names if n.startswith("--")]
        if dest:
            found.add(dest.group(2))
        elif names:
            found.add((long or names)[0].lstrip("-").replace("-", "_"))
    return found


def _parenthesized(source: str, start: int) -> str:
    """The text from ``start`` to the parenthesis that closes the one before it."""
    depth = 1
    for position in range(start, min(len(source), start + 2000)):
        char = source[position]
        depth += char == "("
        depth -= char == ")"
        if depth == 0:
            return source[start:position]
    return ""


def index_hits(hits: Pattern[str], source: str) -> Pattern[str]:
    """``hits`` and the uses of a name given ``torch.cuda.current_device()``, or of an
    int option (``args.gpu``), in a device position (``device=dev``, ``.to(dev)``),
    on lines that need not say cuda."""
    names = _CURRENT_INDEX.findall(source) if "current_device" in source else []
    options = sorted(int_options(source))
    if options:
        option = "|".join(options)
        hits = re.compile(
            f"{hits.pattern}|(?:to\\(|device=)\\s*(?:\\w+\\.)+(?:{option})\\b"
        )
    if not names:
        return hits
    alternatives = "|".join(sorted(set(names)))
    return re.compile(f"{hits.pattern}|(?:to\\(|device=)\\s*(?:{alternatives})\\b")
