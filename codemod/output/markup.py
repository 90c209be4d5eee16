"""The Markdown torchport writes (rule messages and documentation) as HTML, for
the report's page: inline code, bold and links in a line, and the blocks the rule
documentation uses (headings, paragraphs, lists, tables, fenced code).

Every piece of text is escaped before any tag is added, so what a message or a
file holds is never read as markup; only the constructs below become tags.
"""

from __future__ import annotations

import re
from typing import List

from markupsafe import Markup, escape

_INLINE = re.compile(
    r"(`+)(.+?)\1|\*\*(.+?)\*\*|\[([^\]]+)\]\((#[\w-]+|https?://[^)\s]+)\)"
)


def inline(text: str) -> Markup:
    """One line of Markdown: ``code``, **bold**, [links](#anchor) as tags."""
    out: List[str] = []
    at = 0
    for match in _INLINE.finditer(text):
        out.append(str(escape(text[at : match.start()])))
        code, bold, label, target = (
            match.group(2),
            match.group(3),
            match.group(4),
            match.group(5),
        )
        if code is not None:
            out.append(f"<code>{escape(code.strip())}</code>")
        elif bold is not None:
            out.append(f"<b>{escape(bold)}</b>")
        else:
            out.append(f'<a href="{escape(target)}">{escape(label)}</a>')
        at = match.end()
    out.append(str(escape(text[at:])))
    return Markup("".join(out))


def markdown(text: str) -> Markup:
    """A document of the Markdown ``codemod.output.docs`` writes, as HTML."""
    out: List[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            end = next(
                (j for j in range(i + 1, len(lines)) if lines[j].startswith("```")),
                len(lines),
            )
            out.append(
                f"<pre><code>{escape(chr(10).join(lines[i + 1 : end]))}</code></pre>"
            )
            i = end + 1
        elif re.match(r"#{1,6} ", line):
            level = min(
                len(line) - len(line.lstrip("#")) + 1, 6
            )  # below the report's h3
            out.append(f"<h{level}>{inline(line.lstrip('#').strip())}</h{level}>")
            i += 1
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(f"<li>{inline(lines[i][2:])}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(lines[i])
                i += 1
            out.append(_table(rows))
        elif not line.strip():
            i += 1
        else:
            paragraph = []
            while i < len(lines) and lines[i].strip() and not _starts_block(lines[i]):
                paragraph.append(lines[i])
                i += 1
            out.append(f"<p>{inline(' '.join(paragraph))}</p>")
    return Markup("\n".join(out))


def _starts_block(line: str) -> bool:
    return line.startswith(("```", "- ", "|")) or bool(re.match(r"#{1,6} ", line))


def _cells(row: str) -> List[str]:
    cells = re.split(r"(?<!\\)\|", row.strip().strip("|"))
    return [c.strip().replace("\\|", "|") for c in cells]


def _table(rows: List[str]) -> str:
    body = [r for r in rows if not re.fullmatch(r"\|?[\s:|-]+\|?", r)]
    if not body:
        return ""
    head, rest = body[0], body[1:]
    html = ["<table><tr>"]
    html += [f"<th>{inline(c)}</th>" for c in _cells(head)]
    html.append("</tr>")
    for row in rest:
        html.append(
            "<tr>" + "".join(f"<td>{inline(c)}</td>" for c in _cells(row)) + "</tr>"
        )
    html.append("</table>")
    return "".join(html)
