"""The options the commands share: what to rewrite and how (``run_options``), and
how to show it (``output_options``).

Apart from the commands so that ``fix``, ``check`` and ``report`` take the same
options, spelled and documented once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import click

from codemod.output.formats import FORMATS


def _codes_option(name: str, text: str):
    return click.option(
        name,
        multiple=True,
        metavar="CODES",
        help=text + " Comma-separated; repeat the option to add more.",
    )


def run_options(command):
    """The options shared by `fix`, `check` and `report`."""
    options = [
        _codes_option(
            "--select", "Rule codes or prefixes to enable (default: TP, all)."
        ),
        _codes_option("--extend-select", "Rule codes or prefixes to add to select."),
        _codes_option("--ignore", "Rule codes or prefixes to disable."),
        click.option(
            "--unsafe-fixes/--no-unsafe-fixes",
            default=None,
            help="Also apply fixes that need review.",
        ),
        click.option(
            "--target-torch",
            help="Oldest torch release the code must run on, e.g. 2.6.",
        ),
        click.option(
            "--device-name",
            help="Name of the module-level device binding (default DEVICE).",
        ),
        click.option(
            "--format/--no-format",
            "format_code",
            default=None,
            help="Black the changed lines (default on).",
        ),
        click.option(
            "-j",
            "--jobs",
            type=click.IntRange(min=1),
            help="Worker processes (default: all cores).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def output_options(command):
    options = [
        click.option(
            "--output-format",
            type=click.Choice(sorted(FORMATS)),
            default="text",
            show_default=True,
            help="text, json (Ruff-shaped records), github (annotations) or sarif.",
        ),
        click.option(
            "--show-fixes", is_flag=True, help="List the sites rewritten in each file."
        ),
        click.option(
            "--stdin-filename",
            help="The name (and configuration) for input read from '-'.",
        ),
        click.option(
            "--statistics",
            is_flag=True,
            help="Print counts per rule and family instead of each site.",
        ),
        click.option(
            "--strict",
            is_flag=True,
            help="Informational sites (portable as they stand) fail too.",
        ),
        click.option(
            "--exit-zero",
            is_flag=True,
            help="Exit 0 even when sites remain or files would change (2 stays 2).",
        ),
        click.option(
            "--report",
            "report_file",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Also write a migration report (.md or .html).",
        ),
        click.option(
            "-q",
            "--quiet",
            is_flag=True,
            help="Print diagnostics only: no summary, no progress bar.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def config_flags(options: Dict[str, Any]) -> Dict[str, Any]:
    """The ``run_options`` that configuration merges over ``[tool.torchport]``, by
    their key there (None: not given)."""
    return {
        "select": options["select"],
        "extend-select": options["extend_select"],
        "ignore": options["ignore"],
        "unsafe-fixes": options["unsafe_fixes"],
        "target-torch": options["target_torch"],
        "device-name": options["device_name"],
        "format": options["format_code"],
    }
