"""The catalogue is the one source: every copy is derived from it and none is stale."""

from __future__ import annotations

import re

import black
import pytest
import torch

from codemod import catalog
from codemod.output import docs
from codemod.run.job import CHECK, Job
from codemod.run.prefilter import PREFILTER, Prefilter
from codemod.run.process import process_source
from codemod.rules.notebook import SKIPPED_CELL
from codemod.passes import PASSES
from codemod.model.options import Options
from codemod.rules import all_rules
from codemod.rewrite.pipeline import rewrite_source
from tests.fixture_cases import case_id, rule_fixtures
from tests.test_fixtures import _rewrite

# A pass in a package of its own names its catalogue owner.
OWNERS = {getattr(p, "OWNER", p.__module__.rsplit(".", 1)[1]): p for p in PASSES}


def _codes(source: str, **options):
    result = rewrite_source(source, Options(**options), format_mode=black.Mode())
    return [d.code for d in result.diagnostics], result.code


def test_passes_run_in_the_catalogue_order():
    assert tuple(OWNERS) == catalog.PASS_ORDER


def test_every_row_names_a_rule_of_its_pass():
    for row in catalog.ROWS:
        assert row.owner in OWNERS, row
        assert row.rule in OWNERS[row.owner].RULES, row


def test_every_rule_has_a_row():
    # TP990 is about notebook cells torchport cannot read, not a CUDA name.
    covered = {row.code for row in catalog.ROWS} | {SKIPPED_CELL.code}
    assert [code for code in all_rules() if code not in covered] == []


def test_no_name_is_in_two_rows():
    names = [
        n for row in catalog.ROWS if row.kind in ("name", "module") for n in row.names
    ]
    assert len(names) == len(set(names))


# torch.cuda re-exports these submodules' functions under its own name.
ALIAS_MODULES = {"memory", "random", "streams"}


def test_every_public_torch_cuda_name_is_in_a_row():
    known = [n for row in catalog.ROWS for n in row.names]
    missing = [
        name
        for name in torch.cuda.__all__
        if name not in ALIAS_MODULES
        and not catalog.under(f"torch.cuda.{name}", known)
        and not catalog.under(f"torch.cuda.{name}", catalog.CUDA_ONLY)
    ]
    assert missing == [], "torch.cuda names in no catalogue row"


@pytest.mark.parametrize("owner", catalog.PASS_ORDER)
def test_pass_triggers_are_the_catalogues(owner):
    assert OWNERS[owner].TRIGGER.pattern == catalog.trigger_of(owner).pattern


def test_prefilter_is_the_catalogues():
    assert PREFILTER.pattern == Prefilter(catalog.triggers()).pattern
    for row in catalog.ROWS:
        for name in row.names:
            if catalog.trigger_of(row.owner).search(name):
                assert PREFILTER.matches(name.encode()), name


def test_readme_rule_tables_are_current():
    readme = docs.README.read_text(encoding="utf-8")
    assert readme == docs.readme_with_tables(
        readme
    ), "README rule tables are stale: run python -m codemod.output.docs"
    for code in all_rules():
        assert f"[{code}](docs/rules.md#" in readme


def test_docs_check_fails_on_a_hand_edit(tmp_path, monkeypatch):
    copy = tmp_path / "README.md"
    copy.write_text(
        docs.README.read_text(encoding="utf-8").replace("[TP101]", "[TP1O1]"),
        encoding="utf-8",
    )
    rules_md = tmp_path / "rules.md"
    rules_md.write_text(docs.render_all(), encoding="utf-8")
    monkeypatch.setattr(docs, "README", copy)
    monkeypatch.setattr(docs, "RULES_MD", rules_md)
    assert docs.main(["--check"]) == 1


# -- the drift bugs the catalogue fixed --------------------------------------------
def test_get_arch_list_is_reported_once():
    codes, _ = _codes("import torch\nprint(torch.cuda.get_arch_list())\n")
    assert codes == ["TP903"]


def test_is_current_stream_capturing_is_reported():
    codes, _ = _codes(
        "import torch\nif not torch.cuda.is_current_stream_capturing():\n    pass\n"
    )
    assert codes == ["TP901"]


@pytest.mark.parametrize("library", catalog.CUDA_ONLY_LIBRARIES)
def test_every_cuda_only_library_keeps_its_guard_the_same_way(library):
    source = f"import torch\n\nif torch.cuda.is_available():\n    import {library}\n"
    codes, code = _codes(source)
    assert "torch.cuda.is_available()" in code
    assert "TP910" in codes and "TP301" not in codes


def test_names_left_to_other_passes_are_theirs():
    # What the runtime pass leaves alone, another pass owns; nothing falls between.
    for name in catalog.torch_cuda_elsewhere():
        owners = {
            row.owner
            for row in catalog.ROWS
            if name in row.names and row.kind in ("name", "module")
        }
        assert owners and "cuda_runtime" not in owners, name


# -- fixtures carry the code they exercise -------------------------------------------
# fixtures/TPxxx/<case>: the pass that owns TPxxx is the one whose catalogue rows
# carry the code (TP990, the notebook rule, has no row: its fixtures are notebooks).
OWNER_OF_CODE = {row.code: OWNERS[row.owner] for row in catalog.ROWS}
PASS_FIXTURES = rule_fixtures()
NOTEBOOK_FIXTURES = rule_fixtures("*.before.ipynb")


def test_every_rule_has_a_fixture_in_its_folder():
    named = {b.parent.name for b in PASS_FIXTURES + NOTEBOOK_FIXTURES}
    without = [code for code in all_rules() if code not in named]
    assert without == [], "rules without a fixture"


def test_every_fixture_folder_is_a_rule():
    folders = {b.parent.name for b in PASS_FIXTURES + NOTEBOOK_FIXTURES}
    assert folders <= set(all_rules())


@pytest.mark.parametrize("before", NOTEBOOK_FIXTURES, ids=case_id)
def test_a_notebook_fixture_gives_the_code_of_its_folder(before):
    result = process_source(before.name, before.read_bytes(), Job(CHECK, Options()))
    assert before.parent.name in {d.code for d in result.diagnostics}


@pytest.mark.parametrize("before", PASS_FIXTURES, ids=case_id)
def test_a_fixture_gives_the_code_of_its_folder(before):
    code = before.parent.name
    assert code in OWNER_OF_CODE, f"{code}: no catalogue row names its pass"
    codes = {r.code for r in OWNER_OF_CODE[code].RULES}
    assert code in codes
    result = _rewrite(before.read_text(encoding="utf-8"))
    emitted = {d.code for d in result.diagnostics} & codes
    # A fixture without any site of its pass shows what the rule leaves alone.
    assert code in emitted or not emitted, f"{case_id(before)} never gives {code}"
