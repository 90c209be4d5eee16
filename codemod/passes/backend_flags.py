"""TP6xx: ``torch.backends.cudnn`` and ``torch.backends.cuda`` flags.

Most of these flags tune a CUDA library and are harmless elsewhere (setting them on
CPU PyTorch works and does nothing), so they are reported with advice and left as
they are. Two have an exact device-generic equivalent and are rewritten:

* ``torch.backends.cuda.matmul.allow_tf32 = X`` -> ``torch.set_float32_matmul_precision``:
  "high" gives exactly the matmul results of ``allow_tf32 = True`` on CUDA and
  "highest" those of ``= False`` (measured on an H200). "highest" is the default
  everywhere, so ``= False`` is a safe fix; "high" also allows reduced precision
  on other devices (oneDNN's TF32 on the CPU, a bf16 pass on TPU), so ``= True``
  is an unsafe one.
* ``torch.backends.cuda.sdp_kernel(...)`` -> ``torch.nn.attention.sdpa_kernel([...])``:
  sdp_kernel builds exactly that backend list from its booleans and enters
  sdpa_kernel with it.

``torch.backends.cudnn.allow_tf32`` (convolutions) has no device-generic switch:
``set_float32_matmul_precision`` and ``torch.backends.fp32_precision`` leave it alone.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

from codemod import catalog
from codemod.passes.base import Pass
from codemod.passes.names import bind_arguments
from codemod.passes.imported import ImportSites, imported_names
from codemod.model.rule import Fix
from codemod.rules.backend_flags import RULES

CUDA_BACKENDS = tuple(
    r.name for r in catalog.rows_of("backend_flags") if r.kind == "module"
)

# Qualified name -> rule. Everything else under CUDA_BACKENDS is TP609.
FLAGS: Dict[str, str] = catalog.codes_of("backend_flags", kinds=("name",))
# What a reference that is not rewritten says, where it differs from the rule's message.
READ_MESSAGES = {
    "TP604": "reads `allow_tf32`: the device-generic reading is "
    '`torch.get_float32_matmul_precision() != "highest"`',
    "TP606": "`sdp_kernel` used other than in a call: use "
    "`torch.nn.attention.sdpa_kernel([SDPBackend...])`",
}
SPLIT_MESSAGE = (
    "`allow_tf32` assigned together with other targets: split the assignment, then "
    "use `torch.set_float32_matmul_precision`"
)
TF32_ON = (
    "`allow_tf32 = {value}` is `torch.set_float32_matmul_precision({precision})` on "
    'CUDA, but "high" also lowers float32 matmul precision on other devices'
)
MATMUL_TF32 = "torch.backends.cuda.matmul.allow_tf32"
SDP_KERNEL = "torch.backends.cuda.sdp_kernel"
# sdp_kernel's parameters in order, and the backend each enables, in the order
# sdp_kernel appends them to its list.
SDP_PARAMETERS = ("enable_flash", "enable_math", "enable_mem_efficient", "enable_cudnn")
SDP_BACKENDS = (
    ("enable_flash", "FLASH_ATTENTION"),
    ("enable_mem_efficient", "EFFICIENT_ATTENTION"),
    ("enable_math", "MATH"),
    ("enable_cudnn", "CUDNN_ATTENTION"),
)


def is_cuda_backend(name: Optional[str]) -> bool:
    """``torch.backends.cuda[.x]`` or ``torch.backends.cudnn[.x]``."""
    return bool(name) and any(
        name == prefix or name.startswith(prefix + ".") for prefix in CUDA_BACKENDS
    )


def _shown(value: cst.BaseExpression, limit: int = 40) -> str:
    """The value as written, on one line (cut at ``limit`` characters)."""
    text = " ".join(cst.Module([]).code_for_node(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _bool_literal(node: cst.BaseExpression) -> Optional[bool]:
    if isinstance(node, cst.Name) and node.value == "True":
        return True
    if isinstance(node, cst.Name) and node.value == "False":
        return False
    return None


class BackendFlags(ImportSites, Pass):
    RULES = RULES
    TRIGGER = catalog.trigger_of("backend_flags")

    def visit_Module(self, node: cst.Module) -> None:
        self.handled: Set[cst.CSTNode] = set()  # references a parent dealt with
        self.tf32_assigns: Set[cst.Assign] = set()
        self.writes: Set[cst.CSTNode] = set()  # assignment targets
        self.sdp_calls: Dict[cst.Call, List[str]] = {}  # call -> enabled backends

    def _imports(self, node) -> None:
        for alias, name in imported_names(node):
            if is_cuda_backend(name):
                self.report_import(alias, "TP609")

    def visit_Assign(self, node: cst.Assign) -> None:
        targets = [t.target for t in node.targets]
        self.writes.update(targets)
        if len(targets) == 1 and self.qualified_name(targets[0]) == MATMUL_TF32:
            self.tf32_assigns.add(node)
            self.handled.add(targets[0])

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.writes.add(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        if self.callee(node) != SDP_KERNEL:
            return
        self.handled.add(node.func)
        backends = self._sdp_backends(node)
        if backends is None:
            self.report(
                node,
                "TP606",
                "`sdp_kernel(...)` with arguments that are not "
                "literal booleans: write `torch.nn.attention.sdpa_kernel"
                "([SDPBackend...])` with the backends they enable",
            )
        else:
            self.sdp_calls[node] = backends

    @staticmethod
    def _sdp_backends(call: cst.Call) -> Optional[List[str]]:
        """The SDPBackend names sdp_kernel(...) enables, or None if not literal."""
        bound = bind_arguments(call, SDP_PARAMETERS)
        if bound is None:
            return None
        values = dict.fromkeys(SDP_PARAMETERS, True)
        for name, node in bound.items():
            value = _bool_literal(node)
            if value is None:
                return None
            values[name] = value
        return [backend for flag, backend in SDP_BACKENDS if values[flag]]

    def _reference(self, node: cst.CSTNode) -> bool:
        """Report a reference to a CUDA backend setting; False stops the descent."""
        if node in self.handled:
            return False
        name = self.qualified_name(node)
        if not is_cuda_backend(name):
            return True
        code = FLAGS.get(name, "TP609")  # type: ignore[arg-type]
        if node in self.writes:
            message = SPLIT_MESSAGE if code == "TP604" else ""
        else:
            message = READ_MESSAGES.get(code, "")
        self.report(node, code, message)
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self._reference(node)

    def visit_Name(self, node: cst.Name) -> bool:
        return self._reference(node)

    # -- rewriting ------------------------------------------------------------------
    def leave_Assign(self, original_node, updated_node):
        if original_node not in self.tf32_assigns:
            return updated_node
        value = _bool_literal(original_node.value)
        if value is False:
            precision, fix, message = '"highest"', Fix.SAFE, ""
        else:
            precision = '"high"' if value else '"high" if {value} else "highest"'
            written = _shown(original_node.value)
            fix, message = Fix.UNSAFE, TF32_ON.format(
                value=written, precision=precision.replace("{value}", written)
            )
        if not self.record_and_decide(
            original_node.targets[0].target, "TP604", message, fix
        ):
            return updated_node
        template = "{torch}.set_float32_matmul_precision(" + precision + ")"
        values = {"value": updated_node.value} if "{value}" in precision else {}
        call = self.expr(template, **values)
        return cst.Expr(call, semicolon=updated_node.semicolon)

    def leave_Call(self, original_node, updated_node):
        backends = self.sdp_calls.get(original_node)
        if backends is None or not self.record_and_decide(original_node, "TP606"):
            return updated_node
        listed = ", ".join(f"{{torch}}.nn.attention.SDPBackend.{b}" for b in backends)
        return self.expr("{torch}.nn.attention.sdpa_kernel([" + listed + "])")
