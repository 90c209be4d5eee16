"""Below torch 2.6 the device binding adapts to the torch it runs on, unless the
module keeps CUDA's own tests, which the target cannot port: then it stays CUDA's,
so that the device and those tests agree on every machine."""

from __future__ import annotations

import ast

from codemod.passes.names import ModuleFacts


def _is_str(node: ast.AST, value: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == value


CUDA_TESTS = {"torch.cuda.is_available", "torch.cuda.device_count"}


def keeps_cuda_tests(tree: ast.Module, facts: ModuleFacts) -> bool:
    """Whether the module asks CUDA's availability or names "nccl" other than in
    ``"cuda" if torch.cuda.is_available() else "cpu"`` (what the binding replaces):
    below 2.6 such tests stay CUDA's, and a device that adapted would disagree with
    them on another accelerator (the model there, the "gloo" backend here)."""
    replaced = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.IfExp)
            and _is_str(node.orelse, "cpu")
            and _is_str(node.body, "cuda")
        ):
            replaced.add(id(node.test))
    for node in ast.walk(tree):
        if _is_str(node, "nccl"):
            return True
        if (
            isinstance(node, ast.Call)
            and id(node) not in replaced
            and facts.qualified_name(node.func) in CUDA_TESTS
        ):
            return True
    return False
