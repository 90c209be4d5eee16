"""The command line."""

from codemod.cli.app import main

__all__ = ["main"]
