"""What torchport needs to know about a whole module, read from CPython's ``ast``.

libcst's ScopeProvider costs about three parses of the file, and torchport only
parses the few statements that mention CUDA (see ``codemod.rewrite.chunks``). Names are
resolved here instead, from the module's imports: ``import torch as th`` makes
``th.cuda.synchronize`` mean ``torch.cuda.synchronize``. A name that is also bound
some other way anywhere in the module (a parameter, an assignment, a loop variable)
is ambiguous and resolves to nothing, so a shadowed name is never rewritten; bound
inside a function or a class body only, it is shadowed there alone (``shadowed``:
the lines where it is), as Python's scopes have it: ``torch: str`` in a dataclass
leaves ``torch`` the module everywhere else.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from codemod.model.lines import LineSet, distinct, line_numbers

# Every word of the file: a fresh name must differ from all of them (strings and
# comments included, which errs on the safe side).
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _stored_names(target: ast.AST) -> Set[str]:
    return {
        node.id
        for node in ast.walk(target)
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
    }


@dataclass
class ModuleFacts:
    imports: Dict[str, str] = field(default_factory=dict)  # local name -> qualified
    # local name -> (module, name, alias) of the import that binds it, in the form
    # libcst's RemoveImportsVisitor takes
    import_forms: Dict[str, Tuple[str, Optional[str], Optional[str]]] = field(
        default_factory=dict
    )
    bound: Set[str] = field(default_factory=set)  # names bound other than by import
    identifiers: Set[str] = field(default_factory=set)  # every word in the module
    functions: Set[str] = field(default_factory=set)  # names of every def
    stored_attributes: Set[str] = field(default_factory=set)  # `x.name = ...` anywhere
    torch_alias: Optional[str] = None  # what a top-level `import torch [as x]` binds
    # An imported name also bound in some functions or class bodies -> the spans of
    # lines (first, last) where that other binding is the one read.
    shadowed: Dict[str, List[Tuple[int, int]]] = field(default_factory=dict)
    # An imported name also bound otherwise at module level -> what it imports: it
    # resolves to nothing anywhere (its uses are reported, never rewritten).
    unresolved: Dict[str, str] = field(default_factory=dict)
    # (F, what it picks) of each `"cuda" if F else "cpu"` anywhere in the module,
    # as ast.unparse writes F: "cuda", or the device the choice became once ported
    # (`_DEVICE().type if F else "cpu"`, as written). Where F picks the accelerator,
    # the program runs on it.
    flags: Set[Tuple[str, str]] = field(default_factory=set)
    # Names bound in the module's own scope (at its top level, or in a top-level
    # `if`/`try`): by imports (name -> what each import binds there), and otherwise
    # (an assignment, a def, a `global` in a function). A function's own imports are
    # in neither: they bind nothing a module-level statement can read.
    module_imports: Dict[str, Set[str]] = field(default_factory=dict)
    module_bound: Set[str] = field(default_factory=set)

    @classmethod
    def of(cls, tree: ast.Module, source: str) -> "ModuleFacts":
        """Read the facts from the module's statements (not every expression node:
        that walk would cost as much as the rest of the rewrite)."""
        facts = cls(identifiers=distinct(_IDENTIFIER, source))
        ambiguous: Set[str] = set()
        # Each statement with the scope it binds in: None for the module, else the
        # spans of lines where a binding made there is read.
        stack: List[Tuple[ast.AST, Optional[List[Tuple[int, int]]]]] = [
            (stmt, None) for stmt in tree.body
        ]
        scoped: Dict[str, List[Tuple[int, int]]] = {}  # bound in a function or class
        while stack:
            node, scope = stack.pop()
            before, facts.bound = facts.bound, set()  # not a copy each: quadratic
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        facts._bind_import(alias.asname, alias.name, ambiguous)
                        facts.import_forms[alias.asname] = (
                            alias.name,
                            None,
                            alias.asname,
                        )
                    else:  # `import torch.cuda` binds `torch`
                        head = alias.name.split(".")[0]
                        facts._bind_import(head, head, ambiguous)
                    if scope is None:
                        local = alias.asname or alias.name.split(".")[0]
                        target = alias.name if alias.asname else local
                        facts.module_imports.setdefault(local, set()).add(target)
            elif isinstance(node, ast.ImportFrom):
                if node.level or not node.module:
                    if scope is None:  # binds its names to the package's own
                        source = "." * node.level + (node.module or "")
                        for alias in node.names:
                            local = alias.asname or alias.name
                            target = f"{source}.{alias.name}"
                            facts.module_imports.setdefault(local, set()).add(target)
                    continue
                for alias in node.names:
                    if alias.name != "*":
                        local = alias.asname or alias.name
                        facts._bind_import(
                            local, f"{node.module}.{alias.name}", ambiguous
                        )
                        form = (node.module, alias.name, alias.asname)
                        facts.import_forms[local] = form
                        if scope is None:
                            facts.module_imports.setdefault(local, set()).add(
                                f"{node.module}.{alias.name}"
                            )
            elif isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
            ):
                facts.bound.add(node.name)
                if not isinstance(node, ast.ClassDef):
                    facts.functions.add(node.name)
                    arguments = node.args
                    for arg in (
                        arguments.posonlyargs + arguments.args + arguments.kwonlyargs
                    ):
                        facts.bound.add(arg.arg)
                    for arg in (arguments.vararg, arguments.kwarg):
                        if arg is not None:
                            facts.bound.add(arg.arg)
            elif isinstance(node, ast.Assign) and _is_none(node.value):
                # `except ImportError: pynvml = None`: the name still means the import
                # wherever it is used.
                for target in node.targets:
                    facts._store_attributes(target)
                    if scope is None:  # bound all the same, for a name to add
                        facts.module_bound.update(_stored_names(target))
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = (
                    node.targets if isinstance(node, ast.Assign) else [node.target]
                )
                for target in targets:
                    facts._store(target)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                facts._store(node.target)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        facts._store(item.optional_vars)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                facts.bound.add(node.name)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                facts.bound.update(node.names)
            inner = _inner_scope(node, scope)
            new = facts.bound - before  # costs the node's names, not the module's
            facts.bound = before
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                # Its parameters are its own; its name is the enclosing scope's.
                for name in new - {node.name}:
                    scoped.setdefault(name, []).extend(inner)
                new = new & {node.name}
            if scope is None or isinstance(node, (ast.Global, ast.Nonlocal)):
                facts.bound |= new
            else:
                for name in new:  # bound in this function or class body alone
                    scoped.setdefault(name, []).extend(scope)
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                children = getattr(node, name, None)
                if isinstance(children, list):
                    stack.extend((child, inner) for child in children)
        for name in ambiguous | (facts.bound & set(facts.imports)):
            target = facts.imports.pop(name, None)  # bound at module level too
            if target is not None:
                facts.unresolved[name] = target
        for name, spans in scoped.items():
            if name in facts.imports:
                facts.shadowed[name] = spans
        facts.module_bound |= facts.bound
        facts.bound |= set(scoped)
        unbound = (
            "torch" not in facts.imports and "torch" not in facts.bound | ambiguous
        )
        if unbound and "torch" not in facts.imports.values():
            # `torch` used but never imported (a star import, an injected global):
            # it can only be the module, and once torchport adds `import torch` a
            # second run reads it so; read it so now.
            facts.imports["torch"] = "torch"
        for stmt in tree.body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.name == "torch":
                        facts.torch_alias = alias.asname or "torch"
        facts.flags = device_flags(tree, source)
        return facts

    def _store_attributes(self, target: ast.AST) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                self.stored_attributes.add(node.attr)

    def _store(self, target: ast.AST) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                self.bound.add(node.id)
            elif isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                self.stored_attributes.add(node.attr)

    def _bind_import(self, local: str, target: str, ambiguous: Set[str]) -> None:
        if self.imports.get(local, target) != target:
            ambiguous.add(local)
        self.imports[local] = target

    def qualified_name(self, node, line: Optional[int] = None) -> Optional[str]:
        """``th.cuda.synchronize`` -> ``torch.cuda.synchronize``; None if not imported.

        ``node``: a libcst or an ``ast`` name, attribute chain or call (its callee);
        ``line``: where a libcst node is (an ``ast`` node says it), without which a
        name some function or class also binds resolves to nothing.
        """
        if isinstance(node, (cst.Call, ast.Call)):
            node = node.func
        dotted = dotted_name(node)
        if self.shadowed and dotted:
            spans = self.shadowed.get(dotted.partition(".")[0])
            if spans is not None:
                line = getattr(node, "lineno", line)
                if line is None or any(a <= line <= b for a, b in spans):
                    return None
        return self.resolve(dotted)

    def resolve(self, dotted: Optional[str]) -> Optional[str]:
        """A dotted name as written -> what it means through the module's imports."""
        if not dotted:
            return None
        head, dot, rest = dotted.partition(".")
        target = self.imports.get(head)
        if target is None:
            return None
        return target + dot + rest


# A line that may hold `"cuda" if F else "cpu"` (or torch.device("cuda") if ...,
# or what torchport made of it: `_DEVICE().type if F else "cpu"`).
_FLAG_LINE = re.compile(r"""(?:cuda(?::\d+)?["']\)?|\.type|\w\(\))\s+if\b""")
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _device_literal(node: ast.AST, device: str) -> bool:
    """``"cuda"``/``"cuda:N"`` (or ``"cpu"``), or ``torch.device(...)`` of one."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        if dotted_name(node.func) in ("torch.device", "device"):
            node = node.args[0]
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
        return False
    return re.fullmatch(device + (r"(:\d+)?" if device == "cuda" else ""), node.value)


def _picked(node: ast.AST) -> Optional[str]:
    """What a device choice picks when its test is true: "cuda", or the name,
    ``name()``, ``name.type`` or ``name().type`` it reads (a device binding)."""
    if _device_literal(node, "cuda"):
        return "cuda"
    inner = node.value if isinstance(node, ast.Attribute) else node
    if isinstance(node, ast.Attribute) and node.attr != "type":
        return None
    if isinstance(inner, ast.Call) and not inner.args and not inner.keywords:
        inner = inner.func
    return ast.unparse(node) if isinstance(inner, ast.Name) else None


def device_flags(tree: ast.Module, source: str) -> Set[Tuple[str, str]]:
    """(``F`` as ``ast.unparse`` writes it, what it picks) of each ``"cuda" if F
    else "cpu"`` in the module (``_picked``); only the statements on lines that can
    hold one are walked."""
    found = (match.start() for match in _FLAG_LINE.finditer(source))
    lines = LineSet(line_numbers(source, found))  # no count from the start, no scan
    flags: Set[Tuple[str, str]] = set()
    stack: List[ast.AST] = list(tree.body) if lines else []
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.match_case):  # no position of its own
            stack.extend(stmt.body)
            continue
        first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
        if not lines.any_between(first, last):
            continue
        for name, value in ast.iter_fields(stmt):
            if name in _BLOCKS:
                stack.extend(value)
            elif isinstance(value, (ast.AST, list)):
                for part in value if isinstance(value, list) else [value]:
                    for node in ast.walk(part) if isinstance(part, ast.AST) else ():
                        if isinstance(node, ast.IfExp) and _device_literal(
                            node.orelse, "cpu"
                        ):
                            picked = _picked(node.body)
                            if picked is not None:
                                flags.add((ast.unparse(node.test), picked))
    return flags


def _inner_scope(node: ast.AST, scope):
    """The scope the children of ``node`` bind in: a function's lines; a class
    body's own statements (its methods are not in it); else ``node``'s own."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [(node.lineno, node.end_lineno or node.lineno)]
    if isinstance(node, ast.ClassDef):
        return [
            (stmt.lineno, stmt.end_lineno or stmt.lineno)
            for stmt in node.body
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
    return scope


def dotted_name(node) -> Optional[str]:
    """``a.b.c`` as written, for a pure chain of names (libcst or ``ast`` nodes);
    None for anything else (``f().x``, ``a[0].b``)."""
    parts = []
    while True:
        if isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        elif isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        else:
            break
    if isinstance(node, cst.Name):
        head = node.value
    elif isinstance(node, ast.Name):
        head = node.id
    else:
        return None
    parts.append(head)
    return ".".join(reversed(parts))


def bind_arguments(
    call: cst.Call, names: Sequence[str]
) -> Optional[Dict[str, cst.BaseExpression]]:
    """The arguments of ``call`` by parameter name, positional ones taking ``names``
    in order; None where one is unpacked, unknown or given twice."""
    values: Dict[str, cst.BaseExpression] = {}
    for position, arg in enumerate(call.args):
        if arg.star:
            return None
        name = arg.keyword.value if arg.keyword else None
        if name is None and position < len(names):
            name = names[position]
        if name not in names or name in values:
            return None
        values[name] = arg.value
    return values


def ast_position(
    node: ast.AST, lines: Sequence[str], end: bool = False
) -> Tuple[int, int]:
    """(line, 1-based column) of an ``ast`` node (its end, with ``end``) where libcst
    puts it: the column counted in characters, not in UTF-8 bytes as ``ast`` does."""
    if end:
        line, offset = node.end_lineno or node.lineno, node.end_col_offset or 0  # type: ignore[attr-defined]
    else:
        line, offset = node.lineno, node.col_offset  # type: ignore[attr-defined]
    text = lines[line - 1] if line <= len(lines) else ""
    prefix = text.encode("utf-8")[:offset]
    return line, len(prefix.decode("utf-8", errors="replace")) + 1


LOOPS = (ast.For, ast.AsyncFor, ast.While)


def scope_nodes(
    scope: ast.AST, lambdas: bool = True
) -> Iterator[Tuple[ast.AST, Tuple[ast.AST, ...]]]:
    """Each node of a function (or module) outside the functions and classes it
    defines (and, without ``lambdas``, outside its lambdas), with the loops around
    it."""
    opaque = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    if not lambdas:
        opaque += (ast.Lambda,)
    stack: List[Tuple[ast.AST, Tuple[ast.AST, ...]]] = [
        (child, ()) for child in ast.iter_child_nodes(scope)
    ]
    while stack:
        node, loops = stack.pop()
        yield node, loops
        if isinstance(node, opaque):
            continue
        inner = loops + (node,) if isinstance(node, LOOPS) else loops
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
