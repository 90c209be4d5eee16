"""The options the commands share: what to rewrite and how (``run_options``), and
how to show it (``output_options``).

Apart from the commands so that ``fix``, ``check`` and ``report`` take the same
options, spelled and documented once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import click

from codemod.cli.streams import COLOR_CHOICES
from codemod.output.formats import FORMATS

# Words that name a subcommand. The older `rules` and `explain` give way to a file
# or folder of that name, so `torchport rules` still migrates a `rules/` package.
COMMANDS = ("check", "fix", "rule", "report")
YIELDING_COMMANDS = ("rules", "explain", "simulate")


class CheckCommand(click.Command):
    """``check``, which writes nothing: Ruff's ``check --fix`` gets the spelling
    that rewrites here, not just "No such option"."""

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as error:
            if error.option_name not in ("--fix", "--fix-only"):
                raise
            raise click.UsageError(
                f"No such option '{error.option_name}': `torchport check` writes"
                " nothing; `torchport fix PATH...` rewrites (and `torchport fix"
                " --diff PATH...` shows what it would change)",
                ctx,
            ) from None


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
            help="Name of the module-level device accessor (default _DEVICE).",
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
            help="text (one line a site; also `concise`), full (with the code, a"
            " caret and the fix), json (Ruff-shaped records), github (annotations),"
            " sarif, gitlab (Code Quality), junit (XML) or pylint.",
        ),
        click.option(
            "-o",
            "--output-file",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Write the diagnostics (or the diff, or the statistics) to this"
            " file instead of stdout.",
        ),
        click.option(
            "--color",
            type=click.Choice(COLOR_CHOICES),
            default="auto",
            show_default=True,
            help="Colour the diagnostics: auto (on a terminal; FORCE_COLOR,"
            " NO_COLOR and CLICOLOR_FORCE are honoured), always or never.",
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
        click.option(
            "--add-noqa",
            is_flag=True,
            help="Write nothing but a `# noqa: CODE` comment on each line with a"
            " site that fails (a baseline); informational sites are left as they"
            " are.",
        ),
        click.option(
            "--unused-noqa",
            is_flag=True,
            help="Also report (as TP000) `# noqa` codes of torchport that"
            " suppress no site; fails like a site does.",
        ),
        click.option(
            "--show-settings",
            is_flag=True,
            help="Print the settings resolved for the first PATH, and where they"
            " come from; process nothing.",
        ),
        click.option(
            "--show-files",
            is_flag=True,
            help="Print the files that would be processed; process nothing.",
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
