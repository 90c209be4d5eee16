"""What the passes must know of the whole file before they see a chunk of it: each
scan reads the ``ast``, as a fact set in one statement decides a site in another.

- the ``torch.cuda`` functions a test patches (``codemod.passes.patched``), here
  or, through this module's view of ``torch.cuda``, in another file of the run;
- availability flags that pick CUDA-only code (``codemod.passes.cuda_flags``);
- CUDA literals bound to a name read only as a device, and names bound once to a
  ``torch.device`` (``codemod.passes.device_values``); argparse options of type int;
- the "cuda" a function returns among other devices' names (``codemod.passes.device_pickers``);
- the branches of torch-version tests, whose releases bound the target there
  (``codemod.passes.version_gates``);
- modules moved after an optimizer was made from them (``codemod.passes.moved_parameters``)
  or after two of their modules were given one parameter (``codemod.passes.tied_parameters``),
  reported here, as no pass rewrites anything of them.

Each runs only where the text can hold what it looks for.
"""

from __future__ import annotations

import ast
import re
from typing import Sequence

from codemod.passes import (
    compiled,
    cuda_flags,
    device_pickers,
    device_values,
    patched,
    version_gates,
)
from codemod.passes.base import FileContext
from codemod.passes.device_positions import int_options
from codemod.model.rule import Fix
from codemod.passes.moved_parameters import moved_after_optimizer
from codemod.passes.tied_parameters import moved_after_tie
from codemod.rules import REGISTRY

PICKER = re.compile(r"return\s+[\"']cuda[\"']")  # `return "cuda"`
BOUND_LITERAL = re.compile(r"=\s*f?[\"']cuda[:\"']")  # `loc = "cuda:0"`
TIE = re.compile(r"^\s*\w+(?:\.\w+){2,}\s*=\s*\w+(?:\.\w+){2,}\s*(?:#.*)?$", re.M)


def scan(context: FileContext, tree: ast.Module, lines: Sequence[str]) -> None:
    source, facts = context.source, context.facts
    if "patch" in source or "setattr" in source:  # tests of CUDA
        context.patches = patched.patched_cuda(tree, facts, lines)
        context.patched = patched.patched_here(context.patches)
    for name, where, how in context.options.patched_elsewhere:  # by other files
        context.patched_elsewhere.setdefault(name, patched.elsewhere_reason(where, how))
    if BOUND_LITERAL.search(source):
        context.device_values = device_values.followed_literals(tree, facts, lines)
    if "torch.device(" in source or "device(" in source:
        context.device_objects = device_values.device_objects(tree, facts, lines)
    context.int_options = int_options(source)
    if "jit" in source or "compile" in source:  # compiled functions
        context.compiled = compiled.compiled_functions(tree, facts)
    if "__version__" in source:  # branches for older releases of torch
        context.version_bounds = version_gates.bounded_branches(tree)
    if PICKER.search(source):
        context.device_values.update(device_pickers.picked_cuda(tree, lines))
    if "is_available" in source or "device_count" in source:
        context.kept_flags = cuda_flags.kept_flags(tree, facts, lines)
    if "parameters(" in source or "optim" in source:  # reported here: no fix
        for start, end, message in moved_after_optimizer(tree, lines):
            context.decide(REGISTRY["TP205"], *start, message, Fix.NONE, end)
    tied = {c: rest for c, *rest in context.options.tied_classes}
    if any(c in source for c in tied) or TIE.search(source):  # reported: no fix
        for start, end, message in moved_after_tie(tree, lines, tied):
            context.decide(REGISTRY["TP205"], *start, message, Fix.NONE, end)
