"""The accessor torchport defines never leaks into ``from module import *``, and never
takes the place of a name a star import of the module brings.

Fixtures: fixtures/binding/star_export_without_all, star_import_brings_device.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from codemod.model.options import Options
from codemod.rewrite.pipeline import rewrite_source
from codemod.run.patch_targets import read_run
from codemod.run.star_exports import exported
from tests.cli_helpers import run_cli

CUDA = "import torch\n\nx = torch.ones(2).cuda()\n"
STAR = "import torch\nfrom helpers import *\n\nx = torch.ones(2).cuda()\n"
# What a run of an older torchport wrote: its accessor was named DEVICE.
OLD_OUTPUT = (
    "import functools\n"
    "\n"
    "import torch\n"
    "\n"
    "\n"
    "@functools.cache\n"
    "def DEVICE():\n"
    '    """The accelerator found on first use, else the CPU."""\n'
    "    if torch.accelerator.device_count() > 0:\n"
    "        return torch.accelerator.current_accelerator()\n"
    '    return torch.device("cpu")\n'
    "\n"
    "\n"
    "x = torch.ones(2).to(DEVICE())\n"
    'y = torch.zeros(2, device="cuda")\n'
)


def _exports(code: str) -> dict:
    """What ``from module import *`` binds in an importer, ``code`` run as module."""
    module = {"__name__": "ported"}
    exec(compile(code, "ported.py", "exec"), module)
    names = module.get("__all__") or [n for n in module if not n.startswith("_")]
    return {n: module[n] for n in names}


def test_the_default_accessor_is_not_star_exported():
    code = rewrite_source(CUDA, Options()).code
    assert "def _DEVICE():" in code and "to(_DEVICE())" in code
    assert not any("DEVICE" in name for name in _exports(code))


def test_a_module_with_all_changes_only_by_the_name():
    source = '__all__ = ["x"]\n' + CUDA
    code = rewrite_source(source, Options()).code
    assert code.startswith('__all__ = ["x"]\n') and "def _DEVICE():" in code
    assert list(_exports(code)) == ["x"]


def test_a_name_of_the_users_own_is_respected():
    code = rewrite_source(CUDA, Options(device_name="ACCEL")).code
    assert "def ACCEL():" in code and "to(ACCEL())" in code


def test_a_file_ported_with_the_old_default_name_keeps_it():
    once = rewrite_source(OLD_OUTPUT, Options()).code
    assert "_DEVICE" not in once
    assert "y = torch.zeros(2, device=DEVICE())\n" in once
    assert rewrite_source(once, Options()).code == once


def test_an_old_binding_keeps_its_name():
    source = (
        "import torch\n\n"
        "DEVICE = torch.accelerator.current_accelerator(check_available=True)"
        ' or torch.device("cpu")\n'
        "x = torch.ones(2).cuda()\n"
    )
    code = rewrite_source(source, Options()).code
    assert "x = torch.ones(2).to(DEVICE)\n" in code and "_DEVICE" not in code


def test_a_star_import_not_read_keeps_the_default():
    code = rewrite_source(STAR, Options()).code
    assert "def _DEVICE():" in code


def test_a_public_name_gets_an_underscore_beside_a_star_import_not_read():
    # helpers is not read: it may bring any public name, DEVICE included.
    code = rewrite_source(STAR, Options(device_name="DEVICE")).code
    assert "def _DEVICE():" in code and "def DEVICE" not in code
    assert "def DEVICE():" in rewrite_source(CUDA, Options(device_name="DEVICE")).code


def _run_facts(tmp_path, helpers: str, main: str = STAR, name: str = "main.py"):
    (tmp_path / "helpers.py").write_text(helpers)
    (tmp_path / name).write_text(main)
    files = [tmp_path / "helpers.py", tmp_path / name]
    return read_run(files).star.get(str(tmp_path / name), ())


def test_a_name_the_source_lists_in_all_is_taken(tmp_path):
    star = _run_facts(tmp_path, '__all__ = ["_DEVICE", "WIDTH"]\n_DEVICE = 1\n')
    assert star == (("helpers", ("WIDTH", "_DEVICE")),)
    code = rewrite_source(STAR, replace(Options(), star_exports=star)).code
    assert "def _ACCELERATOR_DEVICE():" in code and "def _DEVICE" not in code


def test_public_names_of_a_source_without_all_are_taken(tmp_path):
    star = _run_facts(tmp_path, "DEVICE = 'cpu'\n_hidden = 1\nimport os\n")
    assert star == (("helpers", ("DEVICE", "os")),)
    options = replace(Options(device_name="DEVICE"), star_exports=star)
    code = rewrite_source(STAR, options).code
    assert "def ACCELERATOR_DEVICE():" in code
    # Known: a public name the source does not bind stays the user's choice.
    options = replace(Options(device_name="ACCEL"), star_exports=star)
    assert "def ACCEL():" in rewrite_source(STAR, options).code


def test_a_relative_star_import_is_read(tmp_path):
    (tmp_path / "__init__.py").write_text("")
    main = STAR.replace("from helpers", "from .helpers")
    star = _run_facts(tmp_path, '__all__ = ["_DEVICE"]\n', main)
    assert star == ((".helpers", ("_DEVICE",)),)


def test_what_a_star_import_brings():
    def of(code):
        return exported(ast.parse(code))

    assert of("__all__ = ['a']\n__all__ += ('b',)\nc = 1\n") == ("a", "b")
    assert of("__all__ = names()\n") is None
    assert of("__all__ = ['a']\n__all__.extend(more)\n") is None
    assert of("from os import *\na = 1\n") is None  # what os brings is not read
    assert of("if x:\n    def f(): pass\nelse:\n    class _C: pass\n") == ("f",)


def test_the_run_hands_the_star_exports_to_each_file(tmp_path):
    (tmp_path / "helpers.py").write_text('__all__ = ["_DEVICE"]\n_DEVICE = "cpu"\n')
    (tmp_path / "main.py").write_text(STAR)
    proc = run_cli(["main.py", "helpers.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code = (tmp_path / "main.py").read_text()
    assert "def _ACCELERATOR_DEVICE():" in code
