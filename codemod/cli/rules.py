"""The commands that document the rules: ``rule`` (one rule, or ``--all``), and the
older ``rules`` and ``explain``.

Apart from the commands that run over files: these read the rule registry only.
"""

from __future__ import annotations

import sys
from typing import Optional

import click

from codemod.cli.summary import EXIT_ERROR


def _rule_table() -> str:
    from codemod.model.rule import Fix, format_version
    from codemod.output.docs import rule_summary
    from codemod.rules import all_rules

    lines = []
    for rule in all_rules().values():
        since = ""
        if rule.fix is not Fix.NONE:
            since = f"torch>={format_version(rule.min_torch)}" if rule.min_torch else ""
        lines.append(
            f"{rule.code}  {rule.fix.value:<6}  {rule.severity:<5}  {since:<11}"
            f"  {rule.name}: {rule_summary(rule)}"
        )
    return "".join(line + "\n" for line in lines)


def _find_rule(word: str):
    """A rule by code (``TP201``, any case) or by name (``cuda-method``)."""
    from codemod.rules import all_rules

    rules = all_rules()
    key = word.strip()
    rule = rules.get(key.upper()) or next(
        (r for r in rules.values() if r.name == key.lower()), None
    )
    if rule is None:
        import difflib

        family = [c for c in rules if c.startswith(key.upper()[:3])]
        names = [r.name for r in rules.values()]
        close = family or difflib.get_close_matches(key, names, n=3, cutoff=0.6)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        click.echo(
            f"torchport: no rule {word!r}{hint}; see `torchport rule --all`", err=True
        )
        sys.exit(EXIT_ERROR)
    return rule


@click.command("rule")
@click.argument("rule", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
def rule_command(rule: Optional[str], show_all: bool) -> None:
    """Document RULE (a code such as TP201 or a name such as cuda-method)."""
    from codemod.output.docs import render_rule

    if show_all or rule is None:
        click.echo(_rule_table(), nl=False)
        return
    if _is_unused_noqa(rule):
        click.echo(_unused_noqa_doc(), nl=False)
        return
    click.echo(render_rule(_find_rule(rule)), nl=False)


def _is_unused_noqa(word: str) -> bool:
    from codemod.output.noqa import UNUSED_NOQA, UNUSED_NOQA_NAME

    return word.strip().upper() == UNUSED_NOQA or word.strip() == UNUSED_NOQA_NAME


def _unused_noqa_doc() -> str:
    """TP000 is no rule of the registry: what ``--unused-noqa`` reports."""
    from codemod.output import noqa

    return (
        f"# {noqa.UNUSED_NOQA} {noqa.UNUSED_NOQA_NAME}\n\n{noqa.UNUSED_NOQA_MESSAGE}\n\n"
        f"{noqa.UNUSED_NOQA_DOC}\n"
    )


@click.command("rules")
def rules_command() -> None:
    """List every rule: code, fix kind, severity, minimum torch, name."""
    click.echo(_rule_table(), nl=False)


@click.command("explain")
@click.argument("rule")
def explain_command(rule: str) -> None:
    """Document RULE (a code or a name); the same as `torchport rule RULE`."""
    rule_command.callback(rule, False)
