"""A class whose modules share a parameter (GPT-2's weight tying) in one file, its
instance moved in another (nanoGPT: model.py ties, train.py moves): the move is
reported, naming the tie, as on a backend that cannot swap parameters in place
each module gets a new parameter of its own."""

from __future__ import annotations

import ast

from codemod.passes.tied_parameters import moved_after_tie, ties_in
from codemod.run.patch_targets import read_run
from tests.cli_helpers import run_cli

MODEL = """import torch.nn as nn


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(8, 4)))
        self.lm_head = nn.Linear(4, 8, bias=False)
        if config.tie:
            self.transformer.wte.weight = self.lm_head.weight

    @classmethod
    def from_pretrained(cls, name):
        return cls(name)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(2, 2)
        self.alias = self.body
"""
TRAIN = """import torch
from model import GPT, Head

device = "cuda" if torch.cuda.is_available() else "cpu"
model = GPT(config)
model.to(device)
pretrained = GPT.from_pretrained("gpt2").to(device)
head = Head().to(device)
"""


def _sites(train: str, tied) -> list:
    tree = ast.parse(train)
    return moved_after_tie(tree, train.splitlines(), tied)


def test_the_tying_class_and_its_first_tie_are_read():
    assert ties_in(ast.parse(MODEL)) == [
        ("GPT", "self.transformer.wte.weight = self.lm_head.weight", "__init__", 10)
    ]
    copies = "class C:\n    def __init__(self):\n        self.cfg.lr = self.args.lr\n"
    assert ties_in(ast.parse(copies)) == []


def test_a_run_reports_the_move_in_the_other_file(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "train.py").write_text(TRAIN)
    facts = read_run(sorted(tmp_path.glob("*.py")))
    ((cls, tie, method, where),) = facts.tied
    assert (cls, method) == ("GPT", "__init__") and where.endswith("model.py:10")
    proc = run_cli(["check", "."], cwd=tmp_path)
    lines = [line for line in proc.stdout.splitlines() if "TP205" in line]
    assert [line.split(": TP205")[0] for line in lines] == [
        "train.py:6:1",
        "train.py:7:14",
    ], proc.stdout
    assert "`model.to()` of a `GPT`" in lines[0]
    assert (
        "(`self.transformer.wte.weight = self.lm_head.weight` in `GPT.__init__`"
        in lines[0]
    )
    assert "model.py:10)" in lines[0] and "tie them again after the move" in lines[0]


def test_named_apart_the_mover_cannot_know_the_tie(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "train.py").write_text(TRAIN)
    proc = run_cli(["check", "train.py"], cwd=tmp_path)
    assert "TP205" not in proc.stdout


def test_only_an_instance_of_the_tying_class_is_reported():
    tied = {"GPT": ("self.a.w = self.b.w", "__init__", "model.py:3")}
    assert _sites(TRAIN.replace("from model import", "from lm import"), tied)
    assert len(_sites(TRAIN.replace("GPT, Head", "GPT as LM, Head"), tied)) == 0
    aliased = TRAIN.replace("GPT, Head", "GPT as LM, Head").replace("GPT(", "LM(")
    assert len(_sites(aliased.replace("GPT.", "LM."), tied)) == 2
    not_imported = "model = GPT(config)\nmodel.to('cuda')\n"  # some other GPT
    assert _sites(not_imported, tied) == []
    own = "class GPT:\n    pass\n\n\nmodel = GPT()\nmodel.to('cuda')\n"
    assert _sites(own, tied) == []  # this file's GPT, which ties nothing
    moved_first = "from model import GPT\nmodel = GPT(c).to('cuda')\n"
    assert len(_sites(moved_first, tied)) == 1  # the tie is made in __init__


def test_a_tie_made_in_the_scope_before_the_move_is_reported():
    code = "m = make()\nm.to('cuda')\nm.a.weight = m.b.weight\nm.to('cuda')\n"
    ((start, _, message),) = _sites(code, {})
    assert start[0] == 4 and "`m.a.weight = m.b.weight` (line 3)" in message
    assert _sites("m.a = m.b\nm.to('cuda')\n", {}) == []  # one module, two names
    copied = "m.config.lr = m.args.lr\nm.to('cuda')\n"  # no parameter
    assert _sites(copied, {}) == []
