"""Configuration as Ruff layers it: flags layered over the file's selection, ``ALL``
the least specific selector, one schema; and hostile configuration that must be
one line, never a traceback."""

from __future__ import annotations

import json
import textwrap

import pytest

from codemod.config import schema
from codemod.config.pyproject import ConfigError
from codemod.config.selection import Layer, enabled_codes
from codemod.config.table import checked_table
from tests.cli_helpers import CUDA, ROOT, THREE, codes, run_cli


# -- flags layered over the file ------------------------------------------------------
def test_ignore_on_the_command_line_adds_to_the_files(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchport]\nignore = ["TP1"]\n')
    (tmp_path / "a.py").write_text(THREE)
    proc = run_cli(["check", "--ignore", "TP3", "a.py"], cwd=tmp_path)
    assert codes(proc.stdout) == ["TP201"]


def test_select_on_the_command_line_replaces_the_files_selection(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchport]\nignore = ["TP1"]\n')
    (tmp_path / "a.py").write_text(THREE)
    proc = run_cli(["check", "--select", "TP1,TP2", "a.py"], cwd=tmp_path)
    assert codes(proc.stdout) == ["TP109", "TP201"]


@pytest.mark.parametrize("ignore", ["TP", "ALL"])
def test_select_all_ignore_tp_selects_nothing(tmp_path, ignore):
    (tmp_path / "a.py").write_text(THREE)
    proc = run_cli(
        ["check", "--select", "ALL", "--ignore", ignore, "a.py"], cwd=tmp_path
    )
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout


ALL_CODES = ["TP101", "TP109", "TP201", "TP202", "TP301", "TP304"]


@pytest.mark.parametrize(
    "layers, expected",
    [
        ([Layer(["TP2"], [], ["TP202"])], {"TP201"}),
        ([Layer(["TP201"], [], ["TP2"])], {"TP201"}),  # the more specific wins
        ([Layer(["TP201"], [], ["TP201"])], set()),  # at equal specificity, ignore
        ([Layer(["ALL"], [], ["TP1"])], {"TP201", "TP202", "TP301", "TP304"}),
        (
            [Layer(["TP2"], [], ["TP202"]), Layer(None, ["TP202"], [])],
            {"TP201", "TP202"},
        ),
        ([Layer(["TP2"], [], ["TP202"]), Layer(None, ["TP202"], ["TP2"])], {"TP202"}),
        ([Layer([], [], ["TP202"]), Layer(["TP2"], [], [])], {"TP201"}),  # carried
        ([Layer(["TP1"], [], []), Layer(None, [], ["TP109"])], {"TP101"}),
        ([Layer(["TP1"], [], ["TP101"]), Layer(["TP"], [], [])], set(ALL_CODES)),
    ],
)
def test_layers_resolve_as_ruffs_rule_selection(layers, expected):
    assert enabled_codes(layers, ALL_CODES) == expected


# -- one schema, published for editors, held to what the runtime accepts ----------
GOOD = [
    {},
    {"select": ["TP1", "ALL"], "extend-select": ["tp201"], "ignore": []},
    {
        "per-file-ignores": {"tests/**": ["TP2"]},
        "exclude": ["a/"],
        "extend-exclude": [],
    },
    {
        "target-torch": "2.7",
        "device-name": "ACCEL",
        "unsafe-fixes": True,
        "format": False,
    },
    {"device-import": "from myproj.runtime import DEVICE as D"},
]
BAD = [
    {"colour": "red"},
    {"select": "TP1"},
    {"select": ["E501"]},
    {"ignore": [3]},
    {"per-file-ignores": {"tests/*": "TP2"}},
    {"exclude": [1]},
    {"target-torch": 2.6},
    {"target-torch": "two"},
    {"unsafe-fixes": "yes"},
    {"format": 1},
    {"device-import": "import myproj"},
]


def _toml(table) -> str:
    def value(v):
        if isinstance(v, dict):
            return (
                "{"
                + ", ".join(f"{json.dumps(k)} = {value(x)}" for k, x in v.items())
                + "}"
            )
        return json.dumps(v)

    return "[tool.torchport]\n" + "".join(
        f"{k} = {value(v)}\n" for k, v in table.items()
    )


@pytest.mark.parametrize("table", GOOD, ids=str)
def test_the_schema_and_the_runtime_accept_the_same(tmp_path, table):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(table, schema.schema())
    (tmp_path / "pyproject.toml").write_text(_toml(table))
    if "device-import" in table:
        (tmp_path / "myproj").mkdir()
        (tmp_path / "myproj" / "runtime.py").write_text("DEVICE = None\n")
    assert checked_table(tmp_path / "pyproject.toml") == json.loads(json.dumps(table))


@pytest.mark.parametrize("table", BAD, ids=str)
def test_the_schema_and_the_runtime_refuse_the_same(tmp_path, table):
    jsonschema = pytest.importorskip("jsonschema")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(table, schema.schema())
    (tmp_path / "pyproject.toml").write_text(_toml(table))
    with pytest.raises(ConfigError):
        checked_table(tmp_path / "pyproject.toml")


def test_the_schema_is_a_valid_schema_and_documents_every_key():
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft7Validator.check_schema(schema.schema())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for key, node in schema.schema()["properties"].items():
        assert node.get("description"), key
        documented = f"{key} = " in readme or f"[tool.torchport.{key}]" in readme
        assert documented, f"README's configuration example lacks {key}"


def test_the_schema_ships_with_the_package():
    assert "codemod.config = *.json" in (ROOT / "setup.cfg").read_text()


# -- hostile configuration: one line and exit 2 -------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "[tool.torchport]\nignore = " + "[" * 1000 + "]" * 1000 + "\n",
        "[tool.torchport]\nx = " + "{a = " * 600 + "1" + "}" * 600 + "\n",
        "[tool.black]\nx = " + "[" * 1000 + "]" * 1000 + "\n",
    ],
    ids=["arrays", "inline-tables", "black-only"],
)
def test_toml_nested_too_deep_is_one_line(tmp_path, text):
    (tmp_path / "pyproject.toml").write_text(text)
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["a.py"], cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and "pyproject.toml: cannot read" in proc.stderr
    assert (tmp_path / "a.py").read_text() == CUDA


@pytest.mark.parametrize(
    "table",
    [
        'exclude = ["[z-a]"]',
        'extend-exclude = ["ok", "[z-a]"]',
        "per-file-ignores = {'[z-a]' = ['TP2']}",
    ],
)
def test_a_pattern_pathspec_refuses_is_one_line(tmp_path, table):
    (tmp_path / "pyproject.toml").write_text(f"[tool.torchport]\n{table}\n")
    (tmp_path / "a.py").write_text(CUDA)
    proc = run_cli(["a.py"], cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "bad pattern '[z-a]'" in proc.stderr and proc.stderr.count("\n") == 1


def test_readme_configuration_example_is_valid(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```toml\n[tool.torchport]\n", 1)[1].split("```", 1)[0]
    block = "\n".join(
        line for line in block.splitlines() if not line.startswith("# device-import")
    )
    (tmp_path / "pyproject.toml").write_text(
        "[tool.torchport]\n" + textwrap.dedent(block)
    )
    assert checked_table(tmp_path / "pyproject.toml") is not None
