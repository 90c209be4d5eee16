"""The migration report: where a project stands after (or before) torchport.

``torchport report PATH -o FILE`` previews a migration (nothing is written);
``torchport --report FILE PATH`` describes the rewrite it has just made. A ``.md``
report is for the pull request that carries the migration; an ``.html`` report is
one self-contained page (no script, no network): a chart of the sites by family and
state, a table of where the remaining work is, and each file's diff and remaining
sites with the code around them. The page is a Jinja2 template: its autoescaping
keeps file names and code from ever being read as markup. Both render the same
numbers, collected by ``report_data``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Tuple

from codemod import __version__
from codemod.model.diagnostic import Diagnostic
from codemod.model.text import printable
from codemod.output.docs import rule_summary
from codemod.output.findings import plural, visible
from codemod.output.report_data import FAMILIES, STATES, ReportData, collect


# -- writing ------------------------------------------------------------------------
def write_report(
    output: Path, results, errors, mode: str, settings, before
) -> ReportData:
    """Write the report of a run to ``output``, whole or not at all: a full disk
    or a killed run leaves the previous report as it was (``OSError`` then)."""
    data = collect(results, errors, mode, settings, before)
    if output.suffix.lower() == ".md":
        text = render_markdown(data)
    else:
        text = render_html(data)
    write_whole(output, document_text(text).encode("utf-8"))
    return data


def write_whole(output: Path, data: bytes) -> None:
    """``data`` into a hidden temporary file beside ``output``, flushed to disk,
    then renamed over it (through a link to the file the link names)."""
    import os
    import tempfile

    target = Path(os.path.realpath(output)) if output.is_symlink() else output
    handle, temp = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".torchport~", dir=target.parent
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        try:
            mode = target.stat().st_mode & 0o7777
        except FileNotFoundError:  # a new report: as open() would create it
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


# The C0 controls a document holds only to deceive: all but tab and newline, and a
# carriage return that does not end a line (it would hide what precedes it).
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)")


def document_text(text: str) -> str:
    """The report as it is written: every control character that is not a line's
    layout escaped (``\\x1b``), and each byte of a name that is not UTF-8, each C1
    and bidirectional control (``visible``), so that the page, and the file shown
    on a terminal, read as they are."""
    return visible(_CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text))


def _rules():
    from codemod.rules import all_rules

    return all_rules()


def _anchor(code: str) -> str:
    """The anchor GitHub gives the rule's heading ``TPxxx name`` in the report."""
    rule = _rules().get(code)
    heading = f"{code} {rule.name}" if rule else code
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


# Markdown's own characters, outside code spans: escaped, so that text from the
# tree (a file name, a parse error) is never read as emphasis, a link or HTML.
_MARKDOWN = re.compile(r"([\\*_\[\]<>#!~&|])")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def _md_cell(text: str) -> str:
    """Text for a table cell or a list item: one line (every control character,
    a newline included, escaped), its Markdown characters escaped outside the
    code spans it has, and ``|`` escaped in those too (a table reads it first)."""
    text = printable(text)
    out, start = [], 0
    for span in _CODE_SPAN.finditer(text):
        out.append(_MARKDOWN.sub(r"\\\1", text[start : span.start()]))
        out.append(span.group().replace("|", "\\|"))
        start = span.end()
    out.append(_MARKDOWN.sub(r"\\\1", text[start:]))
    return "".join(out)


def _md_code(text: str, in_table: bool = False) -> str:
    """Inline code that holds any text (backticks inside included) on one line;
    in a table its ``|`` escaped, as GitHub's tables require even in code."""
    text = printable(text)
    fence = "`"
    while fence in text:
        fence += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    code = f"{fence}{pad}{text}{pad}{fence}"
    return code.replace("|", "\\|") if in_table else code


def _where(d: Diagnostic) -> str:
    return f"{d.where}:{d.line}:{d.col}"


BACKENDS = (
    ("CUDA (and ROCm)", "unchanged: the binding finds `cuda`"),
    ("CPU", 'no accelerator: the binding is `torch.device("cpu")`'),
    (
        "TorchTPU, TorchNeuron, Ascend NPU",
        "install the backend's package: it registers `tpu`, `neuron` or `npu` when"
        " torch is imported",
    ),
    ("Apple MPS, Intel XPU", "a PyTorch build with that backend; nothing to change"),
)


def render_markdown(data: ReportData) -> str:
    rules = _rules()
    totals = data.totals()
    column = "Rewritten" if data.written else "To rewrite"
    out = [
        "# torchport migration report\n",
        f"torchport {__version__}; target torch {data.target_torch}; device"
        f" binding `{data.device_name}`. {data.summary_line()}.\n",
        "## Sites by family\n",
        f"| Family | {column} | Left to review" " | Informational | Suppressed |",
        "|---|---:|---:|---:|---:|",
    ]
    for family, counts in data.counts().items():
        name = FAMILIES.get(family, family)
        out.append(
            f"| {family}xx {_md_cell(name)} | {counts['rewritten']}"
            f" | {counts['reported']} | {counts['informational']}"
            f" | {counts['suppressed']} |"
        )
    out.append(
        f"| **All** | **{totals['rewritten']}** | **{totals['reported']}**"
        f" | **{totals['informational']}** | **{totals['suppressed']}** |\n"
    )
    out.append(
        "Left to review: sites that can fail off CUDA. Informational: sites that run"
        " everywhere as they stand (they fail `--check` only with `--strict`)."
        " Suppressed: `# noqa: TPxxx` comments.\n"
    )
    changed = [f for f in data.files if f.changed]
    out.append(f"## What {'was' if data.written else 'would be'} rewritten\n")
    if changed:
        out += ["| File | Sites | Rules |", "|---|---:|---|"]
        for f in changed:
            fixed = [s.diagnostic.code for s in f.sites if s.state == "rewritten"]
            codes = ", ".join(sorted(set(fixed)))
            out.append(f"| {_md_code(f.path, True)} | {len(fixed)} | {codes} |")
        out.append("")
    else:
        out.append("Nothing.\n")
    out.append("## What needs a human\n")
    grouped = data.by_rule()
    if not grouped:
        out.append("Nothing: every site was rewritten or suppressed.\n")
    for code, sites in grouped.items():
        rule = rules.get(code)
        name = rule.name if rule else sites[0][1].diagnostic.name
        info = " (informational)" if sites[0][1].state == "informational" else ""
        out.append(f"### {code} {name}: {plural(len(sites), 'site')}{info}\n")
        if rule is not None:
            out.append(
                f"{rule_summary(rule)}. [Rule documentation](#{_anchor(code)})\n"
            )
        for f, site in sites:
            d = site.diagnostic
            out.append(f"- {_md_code(_where(d))}: {_md_cell(d.message)}")
        out.append("")
    out += [
        "## Where the remaining work is\n",
        f"| Folder | Files | Changed | {column} | Left to review | Informational"
        " | Suppressed |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in data.folders():
        out.append(
            f"| {_md_code(row['folder'], True)} | {row['files']} | {row['changed']}"
            f" | {row['rewritten']} | {row['reported']} | {row['informational']}"
            f" | {row['suppressed']} |"
        )
    out.append("")
    if data.problems:
        out.append("## Files torchport could not process\n")
        out += [f"- {_md_code(p.path)}: {_md_cell(p.message)}" for p in data.problems]
        out.append("")
    out.append("## Running the result on each backend\n")
    out.append(
        "The rewritten code asks PyTorch for its accelerator when it starts"
        f" (`{data.device_name}`), so the same files run on:\n"
    )
    out += [f"- **{name}**: {how}." for name, how in BACKENDS]
    out.append(
        "\nTo check a machine, run the project's usual entry point; to check the"
        " CPU path on a CUDA machine, hide the GPUs with `CUDA_VISIBLE_DEVICES=`.\n"
    )
    if grouped:
        from codemod.output.docs import render_rule

        out.append("## Rule documentation\n")
        for code in grouped:
            if code in rules:
                out.append(render_rule(rules[code], level=3))
    return "\n".join(out).rstrip("\n") + "\n"


# -- html ---------------------------------------------------------------------------
COLORS = {
    "rewritten": "#2e7d32",
    "reported": "#e65100",
    "informational": "#1565c0",
    "suppressed": "#9e9e9e",
}


def _chart(data: ReportData) -> dict:
    """Bars of the SVG chart: one row per family, one segment per state."""
    counts = data.counts()
    widest = max((sum(c.values()) for c in counts.values()), default=0) or 1
    rows = []
    for family, counter in counts.items():
        x, segments = 0.0, []
        for state in STATES:
            width = 100.0 * counter[state] / widest
            if counter[state]:
                segments.append(
                    {"state": state, "x": x, "width": width, "count": counter[state]}
                )
            x += width
        rows.append(
            {
                "family": family,
                "name": FAMILIES.get(family, family),
                "segments": segments,
                "total": sum(counter.values()),
            }
        )
    return {"rows": rows, "colors": COLORS, "states": STATES}


def _diff_lines(diff: str) -> List[Tuple[str, str]]:
    """(css class, text) per line of a unified diff."""
    kinds = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            kind = "head"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        kinds.append((kind, line))
    return kinds


def render_html(data: ReportData) -> str:
    import jinja2

    from codemod.output.docs import render_rule, rule_summary
    from codemod.output.markup import inline, markdown

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("codemod.output", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(inline=inline, markdown=markdown)

    rules = _rules()
    grouped = data.by_rule()
    template = environment.get_template("report.html.j2")
    return template.render(
        data=data,
        version=__version__,
        totals=data.totals(),
        chart=_chart(data),
        families=FAMILIES,
        folders=data.folders(),
        grouped=grouped,
        rules=rules,
        rule_docs={c: render_rule(rules[c], level=3) for c in grouped if c in rules},
        summaries={c: rule_summary(rules[c]) for c in grouped if c in rules},
        diff_lines=_diff_lines,
        backends=BACKENDS,
        where=_where,
    )
