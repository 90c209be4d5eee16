"""Hard-coded CUDA device strings and `torch.device("cuda")`."""

from __future__ import annotations

from typing import List

from codemod.catalog.rows import Row

ROWS: List[Row] = [
    Row(('torch.device("cuda")',), "TP101", "device_strings", "{device}", kind="form"),
    Row(
        ('"cuda" as a device argument',),
        "TP102",
        "device_strings",
        "{device}.type",
        kind="string",
    ),
    Row(
        ('"cuda" if torch.cuda.is_available() else "cpu"',),
        "TP103",
        "device_strings",
        "{device}.type",
        kind="form",
    ),
    Row(
        ('x == "cuda"',),
        "TP104",
        "device_strings",
        '{device}.type != "cpu"',
        kind="form",
    ),
    Row(
        ('device = "cuda"',), "TP105", "device_strings", "{device}.type", kind="string"
    ),
    Row(('"cuda"',), "TP109", "device_strings", kind="string"),
]
