"""A notebook whose JSON has a key twice is refused: JSON readers differ on which
value counts (Jupyter takes the last), so splicing a rewritten cell into one of them
could overwrite a cell the user sees with another cell's code."""

from __future__ import annotations

import json

import pytest

from tests.bytes_helpers import error_lines
from tests.cli_helpers import run_cli

CUDA_CELL = {
    "cell_type": "code",
    "execution_count": None,
    "metadata": {},
    "outputs": [],
    "source": "import torch\nx = torch.ones(2).cuda()\n",
}
MINE = dict(CUDA_CELL, source="print('a cell only I have')\n")
TAIL = '"metadata": {}, "nbformat": 4, "nbformat_minor": 5'


def _dump(value) -> str:
    return json.dumps(value)


CASES = {
    # "cells" twice: Jupyter shows the last array, torchport used to rewrite the
    # first, putting the CUDA cell's code over the user's own cell
    "cells_twice.ipynb": (
        f'{{"cells": [{_dump(MINE)}], {TAIL}, "cells": [{_dump(CUDA_CELL)}]}}',
        '"cells"',
    ),
    # "source" twice in one cell: the rewrite would splice into the first
    "source_twice.ipynb": (
        '{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],'
        ' "source": "print(1)\\n", "source": "import torch\\nx = torch.ones(2).cuda()\\n"}],'
        f" {TAIL}}}",
        '"source"',
    ),
    # a key twice anywhere: the notebook is not what every reader reads
    "deep_twice.ipynb": (
        '{"cells": [' + _dump(CUDA_CELL) + "], "
        '"metadata": {"kernelspec": {"name": "a", "name": "b"}},'
        ' "nbformat": 4, "nbformat_minor": 5}',
        '"name"',
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_duplicate_keys_are_one_error_line_and_the_notebook_is_untouched(
    tmp_path, name
):
    text, key = CASES[name]
    path = tmp_path / name
    path.write_text(text)
    (tmp_path / "ok.ipynb").write_text(
        json.dumps({"cells": [CUDA_CELL], "metadata": {}, "nbformat": 4})
    )
    proc = run_cli([name, "ok.ipynb"], cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert path.read_text() == text
    assert error_lines(proc.stderr) == [
        f"{name}: cannot parse: duplicate key {key} in its JSON (JSON readers differ"
        " on which one counts; Jupyter takes the last); notebook left untouched"
    ]
    assert ".to(_DEVICE())" in (tmp_path / "ok.ipynb").read_text()  # the rest processed


def test_a_cell_nested_too_deep_is_refused_before_it_is_parsed(tmp_path):
    # libcst's parser would overflow its stack on it (a crash, not an error)
    deep = "x = " + "(" * 1300 + "torch.ones(2).cuda()" + ")" * 1300 + "\n"
    cells = [dict(CUDA_CELL), dict(CUDA_CELL, source=deep)]
    text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4})
    (tmp_path / "deep.ipynb").write_text(text)
    proc = run_cli(["deep.ipynb"], cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert error_lines(proc.stderr) == [
        "deep.ipynb:cell 2: cannot parse: brackets nested more than 200 deep on"
        " line 1 (Python's limit); not parsed; notebook left untouched"
    ]
    assert (tmp_path / "deep.ipynb").read_text() == text
