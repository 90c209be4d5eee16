"""The schema of ``[tool.torchport]``: one JSON Schema (``torchport.schema.json``,
shipped with the package for editors and SchemaStore), and the check of a table
against it.

The keys and the type of each value come from the schema alone; ``pyproject``
then checks what a schema cannot say well (that a code is one some rule has, that
a device name is no builtin), with messages that say how to fix it. The checker
here knows the part of JSON Schema the file uses (``type``, ``properties``,
``additionalProperties``, ``items``, ``$ref``); the schema's ``pattern``s are for
editors, and the test suite holds them to what ``pyproject`` accepts.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Dict, List, Optional

SCHEMA_FILE = Path(__file__).with_name("torchport.schema.json")
_TYPES = {
    "object": (dict, "table"),
    "array": (list, "list"),
    "string": (str, "string"),
    "boolean": (bool, "boolean"),
}


@functools.lru_cache(maxsize=None)
def schema() -> Dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def keys() -> List[str]:
    """The keys ``[tool.torchport]`` may hold, in the schema's order."""
    return list(schema()["properties"])


def problem(table: Any, where: str = "tool.torchport") -> Optional[str]:
    """The first way ``table`` breaks the schema, as ``tool.torchport.KEY must be
    ...``; None when it keeps to it."""
    return _check(schema(), table, where)


def _resolve(node: Dict[str, Any]) -> Dict[str, Any]:
    while "$ref" in node:
        path = node["$ref"].lstrip("#/").split("/")
        found: Any = schema()
        for part in path:
            found = found[part]
        node = {**found, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _check(node: Dict[str, Any], value: Any, where: str) -> Optional[str]:
    node = _resolve(node)
    kind = node.get("type")
    if kind is not None:
        python_type, name = _TYPES[kind]
        if not isinstance(value, python_type) or (
            kind != "boolean" and isinstance(value, bool)
        ):
            return f"{where} must be a {name}{_element(node)}"
    if kind == "object":
        return _check_object(node, value, where)
    if kind == "array":
        for index, item in enumerate(value):
            found = _check(node.get("items", {}), item, f"{where}[{index}]")
            if found:
                return found
    return None


def _check_object(node: Dict[str, Any], value: Dict[str, Any], where: str):
    properties = node.get("properties", {})
    extra = node.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            found = _check(properties[key], item, f"{where}.{key}")
        elif extra is False:
            known = ", ".join(sorted(properties))
            return f"unknown key {where}.{key} (known: {known})"
        elif isinstance(extra, dict):
            found = _check(extra, item, f'{where}."{key}"')
        else:
            found = None
        if found:
            return found
    return None


def _element(node: Dict[str, Any]) -> str:
    """`` of strings`` for an array of strings."""
    items = _resolve(node.get("items", {})) if node.get("type") == "array" else {}
    if items.get("type") in _TYPES:
        return f" of {_TYPES[items['type']][1]}s"
    return ""
