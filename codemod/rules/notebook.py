"""TP990: notebook cells torchport cannot read as Python."""

from __future__ import annotations

from codemod.model.rule import Fix, Rule

SKIPPED_CELL = Rule(
    "TP990",
    "notebook-cell-skipped",
    "a `%%{magic}` cell is not Python: torchport leaves it as it is; port its CUDA"
    " use by hand",
    Fix.NONE,
    None,
    what="Reports a notebook cell that starts with a cell magic whose body is not"
    " Python (`%%bash`, `%%writefile`, ...) and mentions CUDA.",
    why="torchport rewrites Python only; the cell may still pick CUDA when the"
    " notebook runs elsewhere.",
    before="%%bash\npython train.py --device cuda",
    after="%%bash\npython train.py --device cuda  # noqa: TP990",
    safety="No fix.",
)

RULES = (SKIPPED_CELL,)
