"""``torchport simulate [--devices N] -- COMMAND...``: run a program, or its tests, with
torchport's simulated accelerator as the current accelerator (``codemod.simulate``
builds it on first use into a cache, and reports the first device error as
``path:line:`` with a hint)."""

from __future__ import annotations

import sys

import click


@click.command(
    "simulate",
    context_settings={
        "ignore_unknown_options": True,
        "allow_interspersed_args": False,
        "help_option_names": [],
    },
    add_help_option=False,
)
@click.argument("arguments", nargs=-1, type=click.UNPROCESSED)
def simulate_command(arguments) -> None:
    """Run COMMAND on a simulated accelerator: check a port without the hardware."""
    from codemod.simulate import main

    sys.exit(main(list(arguments), prog="torchport simulate"))
