"""Jupyter notebooks: code cells rewritten as one module, every other byte kept."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from codemod.run.job import CHECK, WRITE, Job
from codemod.run.process import process_source
from codemod.model.options import Options
from tests.cli_helpers import run_cli
from tests.fixture_cases import FIXTURES, rule_fixtures

CASES = sorted((FIXTURES / "notebooks").glob("*.before.ipynb")) + rule_fixtures(
    "*.before.ipynb"
)


def after_of(before: Path) -> Path:
    return before.with_name(before.name.replace(".before.", ".after."))


def rewrite(data: bytes, mode: str = WRITE, name: str = "nb.ipynb"):
    return process_source(name, data, Job(mode, Options()))


def code_of(notebook: dict) -> str:
    """The code cells as one script, IPython-only lines and cells dropped."""
    lines = []
    for cell in notebook["cells"]:
        source = cell["source"]
        text = "".join(source) if isinstance(source, list) else source
        if cell["cell_type"] != "code" or re.match(r"%%(?!time|capture)", text):
            continue  # not Python (%%time, %%timeit and %%capture run their body)
        lines += [line for line in text.split("\n") if not re.match(r"\s*[%!]", line)]
    return "\n".join(lines) + "\n"


def without_code(notebook: dict) -> dict:
    copy = json.loads(json.dumps(notebook))
    for cell in copy["cells"]:
        if cell["cell_type"] == "code":
            cell["source"] = None
    return copy


@pytest.mark.parametrize("before", CASES, ids=lambda p: p.name)
def test_before_rewrites_to_after_byte_for_byte(before):
    result = rewrite(before.read_bytes())
    assert result.error is None
    assert result.output == after_of(before).read_bytes()


@pytest.mark.parametrize("before", CASES, ids=lambda p: p.name)
def test_after_is_a_fixed_point(before):
    result = rewrite(after_of(before).read_bytes())
    assert not result.changed and result.error is None
    # what is left is only what the first run reported and left
    reported = [(d.cell, d.code) for d in rewrite(before.read_bytes()).diagnostics]
    left = [(d.cell, d.code) for d in result.diagnostics if not d.applied]
    assert all(site in reported for site in left), left


@pytest.mark.parametrize("before", CASES, ids=lambda p: p.name)
def test_only_code_sources_change(before):
    old = json.loads(before.read_text(encoding="utf-8"))
    new = json.loads(after_of(before).read_text(encoding="utf-8"))
    assert json.dumps(without_code(old)) == json.dumps(
        without_code(new)
    )  # key order too
    old_text, new_text = before.read_text(encoding="utf-8"), after_of(before).read_text(
        "utf-8"
    )
    assert old_text.endswith("\n") == new_text.endswith("\n")
    for cell in new["cells"]:  # magics and shell lines are still there, untouched
        if cell["cell_type"] == "code":
            assert "".join(cell["source"]).count("%") == "".join(
                next(c for c in old["cells"] if c.get("id") == cell.get("id"))["source"]
            ).count("%")


@pytest.mark.parametrize("before", CASES, ids=lambda p: p.name)
def test_after_code_runs_on_cpu(before, tmp_path):
    script = tmp_path / "cells.py"
    script.write_text(code_of(json.loads(after_of(before).read_text(encoding="utf-8"))))
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run(
        [sys.executable, str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_training_fixture_layout():
    after = json.loads(
        after_of(FIXTURES / "notebooks" / "training.before.ipynb").read_text()
    )
    sources = ["".join(c["source"]) for c in after["cells"]]
    # The binding goes once into the cell that imports torch, after its imports.
    assert sum("current_accelerator" in s for s in sources) == 1
    assert sources[1].startswith(
        "%matplotlib inline\nimport functools\n\nimport torch\nimport torch.nn as nn"
        "\n\n\n@functools.cache\ndef _DEVICE():"
    )
    assert sources[2] == (
        "!nvidia-smi -L\nmodel = nn.Linear(4, 2).to(_DEVICE())\n"
        "data = torch.randn(8, 4).to(_DEVICE())"
    )
    # The Python body of a %%time cell is rewritten, the magic line kept.
    assert sources[3] == "%%time\nx = torch.ones(3).to(_DEVICE())"


def test_diagnostics_point_into_cells(tmp_path):
    target = tmp_path / "training.ipynb"
    target.write_bytes((FIXTURES / "notebooks" / "training.before.ipynb").read_bytes())
    proc = run_cli(["--check", str(target)], cwd=tmp_path)
    assert proc.returncode == 1
    assert f"{target}:cell 3:2:9: TP201 " in proc.stdout
    assert f"{target}:cell 3:3:29: TP102 " in proc.stdout
    assert f"{target}:cell 6:2:18: TP104 " in proc.stdout
    records = json.loads(
        run_cli(["--output-format", "json", "--check", str(target)]).stdout
    )
    assert {(r["cell"], *r["location"].values()) for r in records} == {
        (3, 2, 9),
        (3, 3, 29),
        (4, 2, 5),
        (6, 2, 18),
    }


def test_folders_include_notebooks_and_write_them(tmp_path):
    (tmp_path / "nb").mkdir()
    target = tmp_path / "nb" / "training.ipynb"
    before = FIXTURES / "notebooks" / "training.before.ipynb"
    target.write_bytes(before.read_bytes())
    proc = run_cli(["."], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert target.read_bytes() == after_of(before).read_bytes()


def notebook(*sources, metadata=None) -> bytes:
    cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": s,
        }
        for s in sources
    ]
    data = {
        "cells": cells,
        "metadata": metadata or {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(data, indent=1).encode() + b"\n"


def sources_of(data: bytes):
    return ["".join(c["source"]) for c in json.loads(data)["cells"]]


def test_names_resolve_across_cells():
    data = notebook(
        ["import torch as th\n"], ["x = th.ones(2).cuda()\n", "y = x.is_cuda"]
    )
    out = sources_of(rewrite(data).output)
    assert out[0].startswith("import functools\n\nimport torch as th\n\n\n")
    assert "def _DEVICE():" in out[0] and "th.accelerator.device_count()" in out[0]
    assert (
        out[1]
        == 'x = th.ones(2).to(_DEVICE())\ny = x.device.type == _DEVICE().type != "cpu"'
    )


def test_magics_in_blocks_and_shell_assignments_survive():
    data = notebook(
        [
            "import torch\n",
            "def f():\n",
            "    %time g()\n",
            "    return torch.ones(1).cuda()",
        ],
        ["files = !ls\n", "torch.zeros?\n", "z = torch.ones(1).cuda()"],
    )
    out = sources_of(rewrite(data).output)
    assert "    %time g()\n    return torch.ones(1).to(_DEVICE())" in out[0]
    assert out[1] == "files = !ls\ntorch.zeros?\nz = torch.ones(1).to(_DEVICE())"


def test_a_cell_that_does_not_parse_leaves_the_notebook_untouched_and_says_so():
    # The cells share one namespace: rewriting the others would be a guess.
    data = notebook(["import torch\n", "x = torch.ones(1).cuda()"], ["y = x.cuda(\n"])
    result = rewrite(data)
    assert not result.changed and result.output is None
    assert result.error.startswith("nb.ipynb: cell 2: cannot parse: ")
    assert result.error.endswith("; notebook left untouched")


@pytest.mark.parametrize(
    "metadata, source, message",
    [
        ({"kernelspec": "python3"}, None, None),
        ({"language_info": ["python"]}, None, None),
        ({}, ["x = 1\n", 3, "y = torch.ones(1).cuda()"], "cell 1: source is not text"),
    ],
    ids=["kernelspec-string", "language-info-list", "source-holds-a-number"],
)
def test_malformed_notebook_fields_are_one_line_errors_or_read_as_unsaid(
    metadata, source, message
):
    cells = (
        [source]
        if source is not None
        else [["import torch\n", "x = torch.ones(1).cuda()"]]
    )
    data = json.loads(notebook(*cells, metadata=metadata))
    if source is not None:
        data["cells"][0]["source"] = source
    result = rewrite(json.dumps(data).encode())
    if message is None:
        assert result.error is None and result.changed
    else:
        assert result.error == f"nb.ipynb: {message}; notebook left untouched"
        assert not result.changed


def test_json_nested_too_deep_is_one_line():
    data = b'{"cells": [' + b"[" * 100_000 + b'"cuda"' + b"]" * 100_000 + b"]}"
    result = rewrite(data)
    assert result.error == "nb.ipynb: cannot parse: JSON nested too deep"


def test_other_kernels_are_left_alone():
    meta = {"kernelspec": {"language": "R", "name": "ir", "display_name": "R"}}
    data = notebook(['x <- "cuda"\n'], metadata=meta)
    result = rewrite(data)
    assert not result.changed and result.error is None


def test_compact_json_and_string_sources_keep_their_layout():
    data = json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "metadata": {},
                    "source": ["import torch\n", "x = 1"],
                },
                {
                    "cell_type": "code",
                    "metadata": {},
                    "source": "y = torch.ones(1).cuda()",
                },
            ],
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {},
        },
        separators=(",", ":"),
    ).encode()
    out = rewrite(data).output.decode()
    assert out.startswith(
        '{"cells":[{"cell_type":"code","metadata":{},"source":["import functools\\n",'
    )
    assert '"source":"y = torch.ones(1).to(_DEVICE())"}' in out
    assert out.endswith('"nbformat":4,"nbformat_minor":5,"metadata":{}}')


def test_skip_file_in_a_cell():
    data = notebook(
        ["# torchport: skip-file\n", "import torch\n", "x = torch.ones(1).cuda()"]
    )
    assert not rewrite(data, CHECK).changed


def test_not_a_notebook_is_an_error_not_a_crash(tmp_path):
    (tmp_path / "bad.ipynb").write_text('{"cells": [ "cuda"')
    proc = run_cli(["bad.ipynb"], cwd=tmp_path)
    assert proc.returncode == 2 and "bad.ipynb: cannot parse" in proc.stderr
    assert "Traceback" not in proc.stderr
