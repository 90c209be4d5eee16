"""Several modules of one package that each get an accessor of their own in a run:
the summary says, in one line per package, how ``device-import`` gives them one
shared binding instead, and following it works."""

from __future__ import annotations

import subprocess
import sys

from codemod.model.options import Options
from codemod.rewrite.device.text import accessor_lines
from tests.cli_helpers import run_cli

NAME = Options().device_name
MODULE = "import torch\n\n\ndef move(x):\n    return x.cuda()\n"


def _project(root):
    for folder in ("pkg", "pkg/utils", "single"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "__init__.py").write_text("")
    for name in ("a", "b", "c"):
        (root / "pkg" / "utils" / f"{name}.py").write_text(MODULE)
    (root / "single" / "only.py").write_text(MODULE)  # the one module of its package
    (root / "script.py").write_text(MODULE)  # a module of no package


def _hints(stderr: str):
    return [line for line in stderr.splitlines() if "device-import" in line]


def test_the_summary_says_how_to_share_one_binding(tmp_path):
    _project(tmp_path)
    check = run_cli(["check", "."], cwd=tmp_path)
    (hint,) = _hints(check.stderr)
    assert hint.startswith("3 modules of package pkg (pkg/utils/a.py, pkg/utils/b.py")
    assert "and 1 more) get a device accessor each" in hint
    assert f'device-import = "from pkg.device import {NAME}"' in hint
    assert "single" not in hint and "script" not in hint
    fix = run_cli(["fix", "."], cwd=tmp_path)
    assert _hints(fix.stderr) == [hint.replace(") get a", ") got a")]
    assert not _hints(run_cli(["check", "."], cwd=tmp_path).stderr)  # all ported


def test_following_the_hint_gives_the_package_one_binding(tmp_path):
    _project(tmp_path)
    accessor = accessor_lines(NAME, "torch", "functools.cache", (2, 10))
    device = "import functools\n\nimport torch\n\n\n" + "\n".join(accessor) + "\n"
    device += "\n\ndef here(x):\n    return x.cuda()\n"  # uses its own accessor
    (tmp_path / "pkg" / "device.py").write_text(device)
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.torchport]\ndevice-import = "from pkg.device import {NAME}"\n'
    )
    fix = run_cli(["fix", "."], cwd=tmp_path)
    assert fix.returncode == 0, fix.stderr
    assert not _hints(fix.stderr)
    for name in ("a", "b", "c"):
        ported = (tmp_path / "pkg" / "utils" / f"{name}.py").read_text()
        assert f"from pkg.device import {NAME}\n" in ported
        assert f"def {NAME}" not in ported and f".to({NAME}())" in ported
    here = (tmp_path / "pkg" / "device.py").read_text()
    assert here == device.replace("x.cuda()", f"x.to({NAME}())")
    program = (
        "import torch\nfrom pkg.utils import a, b\nimport pkg.device as d\n"
        "print(a.move(torch.ones(1)).device == d.here(torch.ones(1)).device,"
        f" d.{NAME}.cache_info().misses)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True
    )
    assert run.stdout == "True 1\n", run.stderr
