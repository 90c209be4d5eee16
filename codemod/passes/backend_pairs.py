"""A backend per device type, ``"cuda:nccl,cpu:gloo"`` (torch's ``BackendConfig``):
which such strings the distributed pass ports, and the text it writes for them.

The pair "cuda:nccl" becomes the accelerator's type and default backend. On the CPU
that pair would name the CPU a second time, which ``init_process_group`` rejects, so
there the string is the CPU's own pair alone.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

import libcst as cst

PAIRS = re.compile(r"[a-z0-9_]+:[a-z0-9_]+(?:,[a-z0-9_]+:[a-z0-9_]+)*")
DEVICE_KEYED = (
    '"cuda:nccl" in a backend per device hard-codes NVIDIA\'s collective backend; '
    "use the device's own with `torch.distributed.get_default_backend_for_device"
    "(_DEVICE())`"
)
KEYED_LEFT = (
    "a backend per device with NCCL's, in a form torchport does not port (another "
    "accelerator's pair, or a device named twice): write the accelerator's pair as "
    '`f"{_DEVICE().type}:{torch.distributed.get_default_backend_for_device(_DEVICE())}"`'
)


def device_backends(node: cst.CSTNode) -> Optional[List[Tuple[str, str]]]:
    """The (device type, backend) pairs of a backend string naming "cuda:nccl" and
    at most the CPU besides, each device once; None for any other string."""
    value = node.evaluated_value if isinstance(node, cst.SimpleString) else None
    if not isinstance(value, str) or not PAIRS.fullmatch(value):
        return None
    pairs = [(d, b) for d, _, b in (pair.partition(":") for pair in value.split(","))]
    devices = [device for device, _ in pairs]
    if ("cuda", "nccl") not in pairs or len(set(devices)) != len(devices):
        return None
    if set(devices) - {"cuda", "cpu"}:
        return None  # another accelerator's pair: which one applies is not certain
    return pairs


def is_device_keyed(node: cst.CSTNode) -> bool:
    """A backend string of device:backend pairs (ported or not)."""
    value = node.evaluated_value if isinstance(node, cst.SimpleString) else None
    return isinstance(value, str) and ":" in value


def keyed_template(
    quote: str, pairs: List[Tuple[str, str]], backend_call: str, accelerated: bool
) -> str:
    """The expression (a template: ``{device}``, ``{torch}``) for ``pairs``, with
    ``backend_call`` the device's default backend; ``accelerated``: only an
    accelerator runs it (no CPU branch)."""
    own = "{{device}.type}:{" + backend_call + "}"
    text = ",".join(own if d == "cuda" else f"{d}:{b}" for d, b in pairs)
    accelerator = f"f{quote}{text}{quote}"
    rest = ",".join(f"{d}:{b}" for d, b in pairs if d != "cuda")
    if not rest or accelerated:
        return accelerator
    return f'{accelerator} if {{device}}.type != "cpu" else {quote}{rest}{quote}'
