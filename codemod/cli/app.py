"""The command line: ``torchport`` and its subcommands. This module is the group
and how a first word that names no subcommand is read; the commands are in
``commands`` (over files) and ``rules`` (documentation).
"""

from __future__ import annotations

import os

import click

from codemod import __version__
from codemod.cli.commands import check_command, fix_command, report_command
from codemod.cli.options import COMMANDS, YIELDING_COMMANDS
from codemod.cli.rules import explain_command, rule_command, rules_command
from codemod.cli.simulate import simulate_command
from codemod.cli.summary import EXIT_ERROR as EXIT_USAGE, EXIT_INTERRUPTED

INTERRUPTED = "torchport: interrupted; files not yet rewritten are untouched"


class DefaultGroup(click.Group):
    """``torchport PATH...`` rewrites (as ``torchport fix``); the rest are subcommands.

    A first word that is neither a subcommand nor an option starts the implicit
    ``fix``; that command then refuses to run unless every path it was given
    exists, so a mistyped subcommand (``torchport chekc .``) rewrites nothing.
    """

    def parse_args(self, ctx, args):
        first = args[0] if args else None
        if first is None and ctx.resilient_parsing:
            return super().parse_args(ctx, args)  # completing the first word
        if first is None:  # bare `torchport`: the help, as Ruff gives it (exit 2)
            click.echo(ctx.get_help(), err=True)
            ctx.exit(EXIT_USAGE)
        if first in ("--version", "-V", "-h", "--help"):
            return super().parse_args(ctx, args)
        if first in YIELDING_COMMANDS and os.path.exists(first):
            first = None  # a path the user wants to migrate
        if first not in (*COMMANDS, *YIELDING_COMMANDS):
            ctx.meta["torchport.implicit_fix"] = True
            args = ["fix", *args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx):
        # Ctrl-C anywhere (while the configuration is read, the rules imported, or
        # the output written): one line and exit 130, never a traceback.
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo(INTERRUPTED, err=True)
            ctx.exit(EXIT_INTERRUPTED)

    def shell_complete(self, ctx, incomplete):
        """The subcommands that start with ``incomplete``; else files and folders
        (``torchport PATH`` is ``torchport fix PATH``)."""
        from click.shell_completion import CompletionItem

        found = [
            CompletionItem(name, help=self.commands[name].get_short_help_str())
            for name in COMMANDS
            if name.startswith(incomplete)
        ]
        if incomplete.startswith("-"):
            return super().shell_complete(ctx, incomplete)
        return found or [CompletionItem(incomplete, type="file")]

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
    simulate_command,
):
    main.add_command(command)
