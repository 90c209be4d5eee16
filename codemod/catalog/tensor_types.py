"""Legacy CUDA tensor types (``torch.cuda.FloatTensor``) and the dtypes they
stand for."""

from __future__ import annotations

from typing import List

from codemod.catalog.rows import Row

# Legacy tensor types -> dtype (TP313).
TENSOR_TYPES = {
    "Float": "float32",
    "Double": "float64",
    "Half": "float16",
    "BFloat16": "bfloat16",
    "Long": "int64",
    "Int": "int32",
    "Short": "int16",
    "Char": "int8",
    "Byte": "uint8",
    "Bool": "bool",
}

ROWS: List[Row] = [
    *(
        Row((f"torch.cuda.{name}Tensor",), "TP313", "tensor_types", rewrite="tensor")
        for name in TENSOR_TYPES
    ),
    # A statement of its own: kept for CUDA behind `if _DEVICE().type == "cuda":`, with
    # `set_default_dtype` and `set_default_device(_DEVICE())` (torch 2.0) elsewhere.
    Row(
        ("torch.set_default_tensor_type(torch.cuda.<T>Tensor)",),
        "TP313",
        "tensor_types",
        kind="form",
        rewrite="default_type",
    ),
]
