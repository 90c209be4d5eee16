"""The command line: ``torchport`` and its subcommands. This module is the group
and how a first word that names no subcommand is read; the commands are in
``commands`` (over files) and ``rules`` (documentation).
"""

from __future__ import annotations

import os

import click

from codemod import __version__
from codemod.cli.commands import check_command, fix_command, report_command
from codemod.cli.rules import explain_command, rule_command, rules_command

# Words that name a subcommand. The older `rules` and `explain` give way to a file
# or folder of that name, so `torchport rules` still migrates a `rules/` package.
COMMANDS = ("check", "fix", "rule", "report")
YIELDING_COMMANDS = ("rules", "explain")


class DefaultGroup(click.Group):
    """``torchport PATH...`` rewrites (as ``torchport fix``); the rest are subcommands."""

    def parse_args(self, ctx, args):
        first = args[0] if args else None
        if first in ("--version", "-V", "-h", "--help"):
            return super().parse_args(ctx, args)
        if first in YIELDING_COMMANDS and os.path.exists(first):
            first = None  # a path the user wants to migrate
        if first not in (*COMMANDS, *YIELDING_COMMANDS):
            args = ["fix", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx, formatter):
        formatter.write_usage(
            "torchport", "[fix|check|report|rule] [OPTIONS] [PATH]..."
        )

    def list_commands(self, ctx):
        return [*COMMANDS, *YIELDING_COMMANDS]


@click.group(
    cls=DefaultGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="`torchport PATH...` is `torchport fix PATH...`. `torchport fix --help`"
    " lists the options. Exit codes: 0 nothing to do, 1 sites or changes found,"
    " 2 usage, configuration, parse or internal errors.",
)
@click.version_option(__version__, "-V", "--version", prog_name="torchport")
def main() -> None:
    """Rewrite CUDA-specific PyTorch code into device-portable code."""


for command in (
    fix_command,
    check_command,
    rule_command,
    rules_command,
    explain_command,
    report_command,
):
    main.add_command(command)
