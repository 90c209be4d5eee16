"""Cell magics whose body is Python (%%time, %%timeit, %%capture) are rewritten;
other %% cells that mention CUDA are reported (TP990)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.cli_helpers import run_cli


def _notebook(*cells: str) -> str:
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "metadata": {},
                    "outputs": [],
                    "source": text.splitlines(keepends=True),
                }
                for text in cells
            ],
            "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )


def _cells(path) -> list:
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]


def _run_as_python(cells, cwd) -> subprocess.CompletedProcess:
    """The notebook's Python, as IPython runs it: a cell magic line dropped."""
    body = []
    for text in cells:
        if text.startswith("%%bash"):
            continue
        lines = text.split("\n")
        if lines[0].startswith("%%"):
            lines = lines[1:]
        body.append("\n".join(lines))
    script = cwd / "as_script.py"
    script.write_text("\n".join(body) + "\n")
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300
    )


def test_python_cell_magics_are_rewritten_and_run_on_cpu(tmp_path):
    target = tmp_path / "nb.ipynb"
    target.write_text(
        _notebook(
            "%%time\nimport torch\nx = torch.ones(2).cuda()",
            "%%timeit -n 1 -r 1\ny = torch.zeros(3).cuda()",
            "%%capture out\nz = torch.ones(1).cuda()\nprint(z)",
            "%%bash\necho cuda",
            "print(x.sum().item())",
        )
    )
    proc = run_cli(["fix", str(target)], cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the %%bash cell is left
    cells = _cells(target)
    assert cells[0].startswith("%%time\nimport functools\n\nimport torch\n")
    assert "x = torch.ones(2).to(_DEVICE())" in cells[0]
    assert cells[1] == "%%timeit -n 1 -r 1\ny = torch.zeros(3).to(_DEVICE())"
    assert cells[2] == "%%capture out\nz = torch.ones(1).to(_DEVICE())\nprint(z)"
    assert cells[3] == "%%bash\necho cuda"
    assert proc.stdout == (
        f"{target}:cell 4:1:1: TP990 a `%%bash` cell is not Python: torchport leaves"
        " it as it is; port its CUDA use by hand\n"
    )
    ran = _run_as_python(cells, tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    again = run_cli(["check", "--diff", str(target)], cwd=tmp_path)
    assert again.stdout == ""  # a second run changes nothing


def test_skipped_cells_that_never_mention_cuda_are_not_reported(tmp_path):
    target = tmp_path / "nb.ipynb"
    target.write_text(_notebook("%%bash\nls", "import torch\nx = torch.ones(2).cuda()"))
    proc = run_cli(["check", str(target)], cwd=tmp_path)
    assert "TP990" not in proc.stdout and "TP201" in proc.stdout


def test_skipped_cell_report_can_be_suppressed(tmp_path):
    target = tmp_path / "nb.ipynb"
    target.write_text(_notebook("%%bash\necho cuda  # noqa: TP990"))
    proc = run_cli(["check", str(target)], cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""
    target.write_text(_notebook("%%bash\necho cuda"))
    assert run_cli(["check", "--ignore", "TP990", str(target)]).returncode == 0


def test_a_shell_line_continued_with_backslashes_stays_as_written(tmp_path):
    pip = "!pip install -q -U \\\n    transformers \\\n  accelerate\n"
    target = tmp_path / "nb.ipynb"
    target.write_text(
        _notebook(
            pip + "import torch\nx = torch.ones(2).cuda()",
            "if True:\n    !echo one \\\n        two\n    y = torch.zeros(1).cuda()",
        )
    )
    proc = run_cli([str(target)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first, second = _cells(target)
    assert first.startswith(pip) and "x = torch.ones(2).to(_DEVICE())" in first
    assert second.startswith("if True:\n    !echo one \\\n        two\n    y = torch")
    assert "torch.zeros(1).to(_DEVICE())" in second


def test_a_cell_written_with_crlf_gets_crlf_on_the_lines_torchport_writes(tmp_path):
    target = tmp_path / "nb.ipynb"
    target.write_text(
        _notebook(
            "import torch\r\nx = torch.ones(2).cuda()\r\ny = 1\r\n",
            "z = torch.zeros(1).cuda()\n",
        )
    )
    assert run_cli([str(target)], cwd=tmp_path).returncode == 0
    crlf, lf = _cells(target)
    assert crlf.count("\n") == crlf.count("\r\n") > 3 and "to(_DEVICE())" in crlf
    assert "\r" not in lf and "to(_DEVICE())" in lf
    assert run_cli(["check", str(target)], cwd=tmp_path).returncode == 0
