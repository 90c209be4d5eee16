"""Where the device binding and ``import torch`` go, once the passes have run.

The binding goes where torch is bound: after the module's imports, before the first
statement that reads it; inside ``try: import torch`` when torch is optional; in
each function that imports torch when the module imports it only there. Below
torch 2.6 the binding adapts to the torch it runs on, unless the module keeps CUDA's
own tests (``text``): such a binding is reported (TP103), it knows only CUDA.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence

from codemod.model.lines import split_lines
from codemod.model.versions import ACCELERATOR_TORCH
from codemod.model.rule import Fix, format_version
from codemod.rewrite.device.text import (
    accessor_definition,
    binding_statement,
    binding_value,
)
from codemod.rewrite.device.cache import cache_binding
from codemod.rewrite.device.optional import (
    functions,
    imports_torch,
    last_import,
    optional_torch_import,
    torch_import_of,
)
from codemod.rules import REGISTRY

if TYPE_CHECKING:  # pragma: no cover
    from codemod.model.diagnostic import Diagnostic
    from codemod.passes.base import FileContext
    from codemod.rewrite.chunks import Chunk


@dataclass
class Insertion:
    after_line: int  # original line after which ``text`` goes (0: top of file)
    text: str


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _torch_imported_anywhere(tree: ast.Module) -> bool:
    """Some ``import torch`` or ``import torch.x`` binds the name, wherever it is."""
    return any(
        alias.name.split(".")[0] == "torch" and alias.asname is None
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    )


def lazy_torch_imports(
    tree: ast.Module,
    uses: Sequence["Chunk"],
    context: "FileContext",
    lines: Sequence[str],
) -> Optional[List[ast.stmt]]:
    """When the module imports torch only inside functions: the ``import torch``
    (as the passes name it) of each function that uses the device and has no
    binding yet, provided every use follows such an import in its own function
    (else None: the binding goes at module level)."""
    device_name, torch_name = context.device_name, context.torch_name
    if any(
        isinstance(stmt, (ast.Import, ast.Try))
        and any(imports_torch(n) for n in ast.walk(stmt))
        for stmt in tree.body
    ):
        return None
    found: Dict[int, ast.stmt] = {}
    for chunk in uses:
        function = next(
            (
                f
                for f in functions(tree)
                if f.lineno <= chunk.start and chunk.end <= f.end_lineno
            ),
            None,
        )
        # The chunk is the function itself where a pass needs all of it: then the
        # import must come before any line that can hold a site.
        first = (
            chunk.start if function and chunk.start >= function.body[0].lineno else 0
        )
        anchor = function and next(
            (
                torch_import_of(s, torch_name)
                for s in function.body
                if torch_import_of(s, torch_name)
                and (
                    s.end_lineno < first
                    or (not first and _first_site_after(s, function, lines))
                )
            ),
            None,
        )
        if anchor is None:
            return None
        if not any(_assigns(s, device_name) for s in function.body):
            found[anchor.lineno] = anchor
    return [found[line] for line in sorted(found)]


def _first_site_after(stmt: ast.stmt, function: ast.AST, lines: Sequence[str]) -> bool:
    """Whether no line of ``function`` before ``stmt`` ends can hold a CUDA site."""
    before = lines[function.body[0].lineno - 1 : stmt.end_lineno]
    return not any("cuda" in line.lower() for line in before)


def _assigns(stmt: ast.stmt, name: str) -> bool:
    if isinstance(stmt, ast.FunctionDef):  # the accessor
        return stmt.name == name
    return isinstance(stmt, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == name for t in stmt.targets
    )


def insertions(
    tree: ast.Module,
    lines: Sequence[str],
    context: "FileContext",
    uses: Sequence["Chunk"],
    newline: str,
) -> List[Insertion]:
    """Lines to add so that every name the passes emitted is defined.

    ``uses`` are the chunks whose rewrite refers to the device, in file order: the
    binding must come before the first of them, where torch is bound.
    """
    # The binding reads torch, whether torchport inserts it or turns a user's
    # device statement into it.
    torch_needed = (
        context.needs_device
        and not context.binding_exists
        and not context.device_import
    )
    insert_binding = torch_needed and context.binding_index is None
    if insert_binding and context.facts.torch_alias is None:
        optional = optional_torch_import(tree)
        if optional is not None:
            anchor = last_import(tree, optional)
            cache = _cache_import(tree, lines, context, anchor.end_lineno, newline)
            return cache + [_in_block(anchor, context, lines, newline)]
        lazy = lazy_torch_imports(tree, uses, context, lines)
        if lazy is not None:
            context.cache_decorator = ""  # remade per call: nothing to remember
            return [_in_block(anchor, context, lines, newline) for anchor in lazy]
    needed: List[str] = []
    if context.device_import and context.needs_device:
        if context.device_name not in context.facts.imports:
            needed.append(context.device_import + newline)
    torch_bound = (
        context.facts.torch_alias is not None or optional_torch_import(tree) is not None
    )
    if not torch_bound and (
        torch_needed or context.needs_torch and not _torch_imported_anywhere(tree)
    ):
        needed.append("import torch" + newline)
    first_use = uses[0].top[0] if uses else None
    limit = first_use if first_use is not None else len(lines) + 1
    imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    before = [s for s in imports if s.end_lineno < limit]
    if before:
        anchor = before[-1].end_lineno
    else:
        head = tree.body[:1]
        if head and _is_docstring(head[0]):
            anchor = head[0].end_lineno
        else:  # after a shebang, an encoding declaration, comments opening the file
            anchor = max(_first_line(tree.body) - 1, 0)
    cache = (
        _cache_import(tree, lines, context, anchor, newline) if insert_binding else []
    )
    out: List[Insertion] = list(cache)
    shared = [i for i in cache if i.after_line == anchor]
    if needed:
        if shared and needed[-1].startswith("import torch"):
            shared[0].text = shared[0].text.rstrip("\r\n") + newline * 2  # apart
        out.append(Insertion(anchor, "".join(needed)))
    if insert_binding:
        follows = bool(needed or shared)  # right after lines it adds itself
        text = _spaced(lines, anchor, context, newline, "", follows)
        out.append(Insertion(anchor, text))
    return out


def adds_accessor(context: "FileContext") -> bool:
    """Whether the module gets an accessor of its own (not a reused binding, nor
    the project's ``device-import``)."""
    return (
        context.needs_device
        and context.device_call
        and not context.binding_exists
        and not context.device_import
        and context.binding_index is None
    )


def _cache_import(
    tree: ast.Module,
    lines: Sequence[str],
    context: "FileContext",
    before: int,
    newline: str,
) -> List[Insertion]:
    """Choose the cache of an accessor defined after line ``before``; ``import
    functools`` where isort would put it, if it needs one: among the standard
    library imports of the module's first run of imports, in order; before that run
    when it has none (after what opens the file: a shebang, an encoding
    declaration, a docstring, a licence comment)."""
    if not context.device_call:
        return []
    target = context.options.target_torch
    chosen = cache_binding(tree, context.facts, target, before)
    context.cache_decorator = chosen.decorator
    if not chosen.import_line:
        return []
    line = chosen.import_line + newline
    body = tree.body
    imports = [
        i
        for i, s in enumerate(body)
        if isinstance(s, (ast.Import, ast.ImportFrom)) and _module_of(s) != "__future__"
    ]
    if not imports:  # before the first statement that is neither docstring nor future
        rest = [
            s
            for s in body
            if not _is_docstring(s)
            and not (isinstance(s, ast.ImportFrom) and s.module == "__future__")
        ]
        anchor = max(_first_line(rest) - 1, 0) if rest else len(lines)
        text = line
        if rest and _blank_run(lines, anchor, 1) == 0:
            text += newline  # code follows at once: imports stand apart
        return [Insertion(anchor, text)]
    first = imports[0]
    anchor = max(_first_line(body[first:]) - 1, 0)
    text = line
    for stmt in body[first:]:
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            break
        module = _module_of(stmt)
        if module.split(".")[0] not in _STDLIB:
            if stmt is body[first]:
                text += newline  # the standard library's section, before the rest
            break
        if module > "functools" or isinstance(stmt, ast.ImportFrom):
            break  # isort's order: `import x` lines by name, then `from x import y`
        anchor = stmt.end_lineno
    return [Insertion(anchor, text)]


# Python 3.10+ lists its own modules; before, the ones torch programs import first.
_STDLIB = getattr(sys, "stdlib_module_names", None) or frozenset(
    "abc argparse ast collections contextlib copy dataclasses datetime enum functools"
    " glob importlib inspect io itertools json logging math multiprocessing os pathlib"
    " pickle random re shutil signal subprocess sys tempfile threading time typing"
    " unittest warnings".split()
)


def _first_line(body: Sequence[ast.stmt]) -> int:
    if not body:
        return 1
    stmt = body[0]
    return min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])


def _module_of(stmt: ast.stmt) -> str:
    if isinstance(stmt, ast.ImportFrom):
        return stmt.module or ""
    return stmt.names[0].name


def _spaced(
    lines: Sequence[str],
    anchor: int,
    context: "FileContext",
    newline: str,
    indent: str,
    follows: bool = False,
) -> str:
    """The binding to insert after line ``anchor`` (``follows``: after lines added
    there too), with the blank lines black puts around it: two around a function at
    the top level, one inside a block."""
    if not context.device_call:
        text = binding_statement(context, newline, indent=indent)
        previous = lines[anchor - 1] if anchor else ""
        following = lines[anchor] if anchor < len(lines) else ""
        if anchor and previous.strip():
            text = newline + text
        return text + newline if following.strip() else text
    wanted = 1 if indent else 2
    text = accessor_definition(context, newline, indent)
    if follows:
        before = 0
    else:
        before = _blank_run(lines, anchor - 1, -1) if anchor else wanted
    after = _blank_run(lines, anchor, 1)
    if anchor < len(lines) and after < len(lines) - anchor:  # code follows
        text += newline * max(0, wanted - after)
    return newline * max(0, wanted - before) + text


def _blank_run(lines: Sequence[str], start: int, step: int) -> int:
    """How many blank lines run from ``start`` in direction ``step``."""
    count, index = 0, start
    while 0 <= index < len(lines) and not lines[index].strip():
        count, index = count + 1, index + step
    return count


def _in_block(
    anchor: ast.stmt, context: "FileContext", lines: Sequence[str], newline: str
) -> Insertion:
    """The binding right after ``anchor`` (an ``import torch``), indented as it is."""
    line = lines[anchor.lineno - 1]
    indent = line[: len(line) - len(line.lstrip())]
    text = _spaced(lines, anchor.end_lineno, context, newline, indent)
    return Insertion(anchor.end_lineno, text)


def with_binding_reports(
    diagnostics: List["Diagnostic"],
    code: str,
    context: "FileContext",
    mapping: Dict[int, int],
    positions: str,
    uses: Sequence["Chunk"],
) -> List["Diagnostic"]:
    """``diagnostics`` and, where the binding stays CUDA's below 2.6, a report on each
    binding torchport added (TP103), as a second run would say of it. Lines are in
    ``positions`` ("output", or "input": the first line that needs the device)."""
    target = context.options.target_torch
    if target >= ACCELERATOR_TORCH or not context.cuda_binding:
        return diagnostics
    value = binding_value(context)  # the accessor returns it, a binding holds it
    source_line = {out: number for number, out in mapping.items()}
    added = []
    for number, line in enumerate(split_lines(code), start=1):
        if value not in line:
            continue
        where = (number, line.index(value) + 1)
        if number in source_line:  # a binding the module has (its own, or earlier)
            what = "the device binding"
            if positions != "output":
                where = (source_line[number], where[1])
        else:
            what = "the device binding added here"
            if positions != "output":
                where = (uses[0].start if uses else 1, 1)
        message = (
            f"{what}, `{value}`, picks only CUDA, as the module's own CUDA tests"
            " (availability, backend) kept by the target do:"
            f" torch.accelerator needs torch >= {format_version(ACCELERATOR_TORCH)};"
            f" target is {format_version(target)}"
        )
        context.decide(REGISTRY["TP103"], *where, message, Fix.NONE)
        added.append(context.diagnostics.pop())
    return sorted(diagnostics + added, key=lambda d: (d.line, d.col, d.code))
