"""The import owner: the device-import setting, and where torch and the binding go."""

from __future__ import annotations

import subprocess
import sys

import pytest

from codemod.config.pyproject import ConfigError, read_table
from codemod.rewrite.device.text import DeviceImport
from codemod.model.options import Options
from codemod.rewrite.pipeline import rewrite_source
from tests.fixture_cases import FIXTURES


@pytest.mark.parametrize(
    "statement, expected",
    [
        ("from myproj.runtime import DEVICE", DeviceImport("myproj.runtime", "DEVICE")),
        (" from a import dev as D ", DeviceImport("a", "dev", "D")),
    ],
)
def test_device_import_parsed(statement, expected):
    assert DeviceImport.parse(statement) == expected


@pytest.mark.parametrize(
    "statement",
    [
        "import myproj",
        "from .runtime import DEVICE",
        "from a import *",
        "from a import b, c",
        "from a import b; x = 1",
        "from a. import b",
        "from a import (",
    ],
)
def test_device_import_rejected_alike_by_config_and_rewrite(statement, tmp_path):
    with pytest.raises(ValueError):
        DeviceImport.parse(statement)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f"[tool.torchport]\ndevice-import = {statement!r}\n")
    with pytest.raises(ConfigError, match="device-import"):
        read_table(pyproject)


def test_optional_torch_module_still_imports_without_torch(tmp_path):
    after = FIXTURES / "binding" / "optional_torch.after.py"
    blocked = (
        "import sys, runpy; sys.modules['torch'] = None; runpy.run_path(sys.argv[1])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", blocked, str(after)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_binding_never_goes_above_the_optional_import():
    source = (
        "try:\n"
        "    import torch\n"
        "except ImportError:\n"
        "    torch = None\n"
        "x = torch.ones(1).cuda() if torch else None\n"
    )
    code = rewrite_source(source, Options()).code
    assert code.startswith("import functools\n\ntry:\n    import torch\n\n")
    assert "    @functools.cache\n    def _DEVICE():\n" in code
    assert code.count("import torch") == 1


def test_lazy_import_used_outside_its_function_is_reported():
    # The use in helper() is not preceded by an import of torch in its function:
    # a binding local to main() would not reach it, and a module-level one would
    # make the module need torch to import, which it did not.
    source = (
        "def main():\n"
        "    import torch\n"
        "    return torch.ones(1)\n"
        "\n"
        "\n"
        "def helper(x):\n"
        "    return x.cuda()\n"
    )
    result = rewrite_source(source, Options())
    assert result.code == source
    [left] = [d for d in result.diagnostics if not d.applied]
    assert (left.line, left.code) == (7, "TP201")
    assert "only inside functions" in left.message


def test_second_run_reuses_a_binding_written_in_a_function():
    before = (FIXTURES / "binding" / "lazy_torch_import.before.py").read_text()
    once = rewrite_source(before, Options()).code
    extended = (
        once + "\n\ndef more():\n    import torch\n\n    return torch.ones(1).cuda()\n"
    )
    twice = rewrite_source(extended, Options()).code
    assert twice.count("def _DEVICE():") == 3
    assert "ACCELERATOR_DEVICE" not in twice


def test_a_binding_assigned_after_a_use_is_not_reused():
    source = (
        "import torch\n"
        "\n"
        "x = torch.ones(1).cuda()\n"
        "_DEVICE = (\n"
        "    torch.accelerator.current_accelerator(check_available=True)"
        ' or torch.device("cpu")\n'
        ")\n"
    )
    code = rewrite_source(source, Options()).code
    # The fallback keeps the underscore: no `from module import *` exports it.
    assert "x = torch.ones(1).to(_ACCELERATOR_DEVICE())\n" in code
    assert code.index("def _ACCELERATOR_DEVICE():") < code.index("x = ")
    exec(compile(code, "<rewritten>", "exec"), {})


# Unused imports removed without the whole-module libcst pass: the same result.
_SCALER_PROGRAMS = {
    "one name": "import torch\nfrom torch.cuda.amp import GradScaler\n\n"
    "scaler = GradScaler()\n",
    "two names, one kept": "import torch\n"
    "from torch.cuda.amp import GradScaler, autocast  # amp\n\n"
    "scaler = GradScaler()\nprint(autocast)\n",
    "comments above": "import torch\n\n# mixed precision\n\n"
    "from torch.cuda.amp import GradScaler\nscaler = GradScaler()\n",
    "named in __all__": "import torch\nfrom torch.cuda.amp import GradScaler\n"
    "__all__ = ['GradScaler']\nscaler = GradScaler()\n",
    "string annotation": "import torch\nfrom torch.cuda.amp import GradScaler\n"
    "def f(s: 'GradScaler'):\n    return GradScaler()\n",
    "word in a message": "import torch\nfrom torch.cuda.amp import GradScaler\n"
    "print('GradScaler is on')\nscaler = GradScaler()\n",
    "inside a function": "import torch\n\ndef f():\n"
    "    from torch.cuda.amp import GradScaler\n    return GradScaler()\n",
    "crlf": "import torch\r\n\r\nfrom torch.cuda.amp import GradScaler\r\n"
    "scaler = GradScaler()\r\n",
    "first in a function": "import torch\n\ndef f():\n\n    # amp\n"
    "    from torch.cuda.amp import GradScaler\n\n    # make one\n\n"
    "    return GradScaler()\n",
    "in a method body": "import torch\n\nclass T:\n    def f(self):\n"
    "        x = 1\n        # amp\n        from torch.cuda.amp import (\n"
    "            GradScaler,\n            autocast,\n        )\n"
    "        with autocast():\n            return GradScaler()\n",
    "tab-indented": "import torch\n\ndef f():\n\tx = 1\n"
    "\tfrom torch.cuda.amp import GradScaler\n\treturn GradScaler()\n",
    "only statement of a block": "import torch\n\ndef f(s=None):\n"
    "    if s is None:\n        from torch.cuda.amp import GradScaler\n"
    "    return GradScaler()\n",
}


@pytest.mark.parametrize("name", sorted(_SCALER_PROGRAMS))
def test_quick_unused_import_removal_matches_libcsts(name, monkeypatch):
    from codemod.rewrite import imports

    source = _SCALER_PROGRAMS[name]
    quick = rewrite_source(source, Options()).code
    monkeypatch.setattr(imports, "_remove_quickly", lambda *args: None)
    assert rewrite_source(source, Options()).code == quick


# The statement-alone remover lays an import out as libcst's RemoveImportsVisitor.
_IMPORT_STATEMENTS = [
    "import torch.cuda.amp\n",
    "import os, torch.cuda.amp as amp, sys\n",
    "import torch.cuda.amp as amp, os  # amp\n",
    "from torch.cuda.amp import GradScaler\n",
    "from torch.cuda.amp import GradScaler as Scaler, autocast\n",
    "from torch.cuda.amp import autocast, GradScaler\n",
    "from torch.cuda.amp import (GradScaler, autocast)\n",
    "from torch.cuda.amp import (\n    GradScaler,\n    autocast,\n)\n",
    "from torch.cuda.amp import (\n    GradScaler,  # scaler\n    autocast,  # cast\n)\n",
    "from torch.cuda.amp import (\n    autocast,  # cast\n    GradScaler,  # scaler\n)\n",
    "from torch.cuda.amp import (\n    autocast,\n    # below\n    GradScaler,\n"
    "    # last\n    custom_fwd,\n)\n",
    "from torch.cuda.amp import (  # amp\n    GradScaler,  # scaler\n"
    "    # next\n    autocast\n)\n",
    "from torch.cuda.amp import GradScaler, autocast, custom_fwd\n",
    "from torch.cuda import amp, nvtx\n",
    "# above\nfrom torch.cuda.amp import GradScaler  # after\n",
]
_REMOVALS = [
    [("torch.cuda.amp", None, None)],
    [("torch.cuda.amp", None, "amp")],
    [("torch.cuda.amp", "GradScaler", None)],
    [("torch.cuda.amp", "GradScaler", "Scaler")],
    [("torch.cuda.amp", "autocast", None)],
    [("torch.cuda.amp", "GradScaler", None), ("torch.cuda.amp", "autocast", None)],
    [("torch.cuda", "amp", None)],
]


@pytest.mark.parametrize("statement", _IMPORT_STATEMENTS)
@pytest.mark.parametrize("removals", _REMOVALS, ids=str)
def test_statement_remover_lays_out_as_libcsts(statement, removals):
    import libcst as cst
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import RemoveImportsVisitor

    from codemod.rewrite.imports import _remove_in_statement

    text = "pass\n" + statement
    visitor = RemoveImportsVisitor(CodemodContext(), removals)
    expected = visitor.transform_module(cst.parse_module(text)).code
    assert _remove_in_statement(text, removals) == expected


def test_statement_remover_leaves_relative_imports_to_the_module_pass():
    from codemod.rewrite.imports import _remove_in_statement

    removal = [("amp", "GradScaler", None)]
    assert _remove_in_statement("pass\nfrom .amp import GradScaler\n", removal) is None
