"""scripts/release_fixtures.py compares fixtures across torch builds: here against
this interpreter itself, where every fixture must print the same."""

from __future__ import annotations

import sys

from scripts import release_fixtures


def test_a_fixture_prints_the_same_on_the_same_torch(capsys):
    assert release_fixtures.main([sys.executable, "-k", "TP101/device_keywords"]) == 0
    assert "1 of 1 fixtures print the same" in capsys.readouterr().out


def test_a_difference_is_reported(tmp_path, capsys):
    fake = tmp_path / "python"
    fake.write_text(
        f'#!/bin/sh\ncase "$1" in -c) exec {sys.executable} "$@";; esac\n'
        "echo other\n"
    )
    fake.chmod(0o755)
    assert release_fixtures.main([str(fake), "-k", "TP101/device_keywords"]) == 1
    assert "FAIL TP101/device_keywords" in capsys.readouterr().out
