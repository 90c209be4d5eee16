"""``--show-settings`` and ``--show-files``: what a run would use, and on what,
without processing anything (as Ruff's options of the same names).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import List, Sequence

from codemod.cli.streams import Output
from codemod.cli.summary import EXIT_CLEAN, EXIT_ERROR
from codemod.model.rule import format_version
from codemod.model.text import printable_path
from codemod.output.findings import visible


def show_files(files: Sequence[Path], errors: List[str], out: Output) -> int:
    """One line per file the run would process, in the order it would; the paths
    it could not take on standard error."""
    import click

    out.write("".join(f"{printable_path(str(path))}\n" for path in files))
    for line in errors:
        click.echo(visible(printable_path(line)), err=True)
    return EXIT_ERROR if errors else EXIT_CLEAN


def show_settings(paths: Sequence[str], configs, out: Output, output_format) -> int:
    """The settings of the first path (a folder: of a file in it), and where each
    comes from; JSON with ``--output-format json``."""
    first = paths[0]
    path = Path(first) / "__init__.py" if os.path.isdir(first) else Path(first)
    settings = configs.settings_for(path)
    record = settings_record(first, settings, path)
    if output_format == "json":
        out.write(json.dumps(record, indent=2) + "\n")
        return EXIT_CLEAN
    source = record["settings-path"] or "none (defaults)"
    lines = [
        f"Resolved settings for: {printable_path(first)}",
        f"Settings path: {printable_path(source)}",
        "",
    ]
    for key, value in record.items():
        if key not in ("path", "settings-path"):
            lines.append(f"{key} = {json.dumps(value)}")
    out.write("".join(line + "\n" for line in lines))
    return EXIT_CLEAN


def settings_record(first: str, settings, path: Path) -> dict:
    from codemod.rewrite.formatting import project_line_length

    options = settings.options
    if settings.per_file is not None:
        options = settings.per_file(Path(os.path.abspath(path)))
    table = {}
    if settings.config is not None:
        from codemod.config.table import checked_table

        table = checked_table(settings.config) or {}
    return {
        "path": first,
        "settings-path": str(settings.config) if settings.config else None,
        "target-torch": format_version(options.target_torch),
        "target-torch-source": settings.target_source,
        "device-name": options.device_name,
        "device-import": options.device_import,
        "unsafe-fixes": options.unsafe_fixes,
        "format": settings.format,
        "line-length": project_line_length(path.parent),
        "enabled-rules": list(options.selection.select),
        "ignored-here": sorted(getattr(options.selection, "dropped", ())),
        "exclude": [*table.get("exclude", []), *table.get("extend-exclude", [])],
        "per-file-ignores": table.get("per-file-ignores", {}),
    }
