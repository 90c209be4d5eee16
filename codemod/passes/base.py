"""What every pass shares: the per-file context and the ``Pass`` base class.

A pass is a libcst transformer that resolves names on the *original* nodes
(qualified names, positions) and builds its replacement from the updated ones.
Passes rewrite expressions in place and never add or remove lines: diagnostics
keep the line numbers of the input, and the device binding is inserted only at
the end (``codemod.rewrite.device``).
"""

from __future__ import annotations

import re
from typing import ClassVar, Dict, List, Optional, Pattern, Set, Tuple

import libcst as cst
from libcst.metadata import PositionProvider

from codemod.model.lines import Spans
from codemod.model.noqa import noqa_lines
from codemod.model.diagnostic import Diagnostic
from codemod.passes.compiled import reason as compiled_reason
from codemod.passes.device_reads import TorchBound, device_read_fix
from codemod.passes.imported import head_name
from codemod.passes.names import ModuleFacts
from codemod.passes.patched import patch_reason
from codemod.passes.version_gates import Bound, site_options

from codemod.model.options import Options
from codemod.rules import REGISTRY
from codemod.model.applicability import decide
from codemod.model.rule import Fix, Rule, TorchVersion


def walk(node: cst.CSTNode):
    """``node`` and everything below it (libcst.matchers.findall without the cost of
    importing libcst.matchers, which is more than a rewrite)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def option_name(call: cst.Call) -> str:
    """``parser.add_argument("--device", ...)`` -> "--device"; "" for other calls."""
    if attribute_name(call) != "add_argument" or not call.args:
        return ""
    first = call.args[0].value
    return str(first.evaluated_value) if isinstance(first, cst.SimpleString) else ""


def attribute_name(node: cst.CSTNode) -> Optional[str]:
    """``x.name`` -> "name" (and for a call, of its callee); else None.

    Plain isinstance checks: importing libcst.matchers costs more than a rewrite.
    """
    if isinstance(node, cst.Call):
        node = node.func
    return node.attr.value if isinstance(node, cst.Attribute) else None


def target_name(node: cst.CSTNode) -> str:
    """The last name of an assignment target: ``device`` of ``self.device = ...``."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return ""


class FileContext:
    """State shared by the passes that run over one file."""

    def __init__(
        self, options: Options, source: str, facts: Optional[ModuleFacts] = None
    ) -> None:
        self.options = options
        self.facts = facts or ModuleFacts()
        self.diagnostics: List[Diagnostic] = []
        self.noqa = noqa_lines(source)
        self.source = source  # the whole file
        # Where the chunk being rewritten sits in the file (see codemod.rewrite.chunks).
        self.line_offset = 0
        self.col_offset = 0
        self.chunk_ends_block = False  # the chunk's last statement ends its block
        self.chunk_text = ""  # the chunk's source, dedented
        self.claimed: Set[cst.CSTNode] = set()  # nodes a pass rewrites as a whole
        # Expressions that need no parentheses where they are (codemod.passes.parens).
        self.bare: Set[cst.CSTNode] = set()
        # CUDA tests kept as written, with why (codemod.passes.kept_for_cuda),
        # marked by the traversal before a pass sees them.
        self.kept_for_cuda: Dict[cst.CSTNode, str] = {}
        self.kept_test_texts: Dict[str, Set[str]] = {}  # test -> names its body binds
        # Filled by codemod.rewrite.device.plan_binding before the first pass runs.
        self.device_name = options.device_name
        # An accessor called where the device is read (_DEVICE()), else a variable.
        self.device_call = False
        self.cache_decorator = ""  # the accessor's cache (device.cache), once placed
        # Statements where reading the device asks for the accelerator earlier than
        # the original asked for CUDA (codemod.rewrite.device.timing).
        self.early_reads = Spans()
        self.torch_bound: Optional[TorchBound] = None  # None: bound on every line
        # Where lambda bodies start and end, (line, column): they run when called.
        self.lazy_regions: List[Tuple[Tuple[int, int], Tuple[int, int]]] = []
        # Patches of torch.cuda in this file's tests (codemod.passes.patched):
        # (line, column) -> target, and the names whose calls stay as written.
        self.patches: Dict[Tuple[int, int], str] = {}
        self.patched: Set[str] = set()
        self.patched_elsewhere: Dict[str, str] = {}  # by a test in another file: why
        # Availability calls setting a flag that picks CUDA-only code
        # (codemod.passes.cuda_flags): (line, column) -> why they stay.
        self.kept_flags: Dict[Tuple[int, int], str] = {}
        # Functions TorchScript or torch.compile compile (codemod.passes.compiled).
        self.compiled: List[Tuple[int, int, str]] = []
        # CUDA literals bound to a name read only in device positions of one kind
        # (codemod.passes.device_values): (line, column) -> that kind.
        self.device_values: Dict[Tuple[int, int], object] = {}
        # Reads of a name its scope binds once, to torch.device(...): a device there.
        self.device_objects: Set[Tuple[int, int]] = set()
        # argparse options of type=int (their dest): a value of one is an int.
        self.int_options: Set[str] = set()
        self.version_bounds: List[Bound] = []  # codemod.passes.version_gates
        self.torch_name = "torch"
        self.needs_device = False
        self.needs_torch = False  # some pass emitted `torch.<...>`
        self.binding_exists = False  # the module already has the binding
        self.binding_spans: List[Tuple[int, int]] = []  # torchport's: never read
        self.cuda_binding = False  # below 2.6, CUDA's own (device.floor), not adaptive
        self.binding_index: Optional[int] = None  # user statement to turn into it
        self.device_import: Optional[str] = None  # import of the project's own device
        # (line or None, module, name, alias): imports left unused, removed at the end
        self.unused_imports: List[
            Tuple[Optional[int], str, Optional[str], Optional[str]]
        ] = []
        self.binding_line = 0  # where the module's binding is assigned, if it has one
        self.indent_unit = "    "  # the file's indentation step (chunks.indent_unit)
        # Tests a pass is about to make true only with an accelerator (`x == "cuda"`
        # becoming `x == _DEVICE().type != "cpu"`): what they guard needs no guard.
        self.accelerator_tests: Set[cst.CSTNode] = set()
        # Imports of CUDA-only APIs reported (bound name -> the diagnostic), and for
        # each, whether each use decided since was rewritten or is informational.
        self.import_reports: Dict[str, Diagnostic] = {}
        self.import_uses: Dict[str, List[bool]] = {}
        self.suppressed_lines: Set[int] = set()  # lines of sites a noqa suppressed

    @property
    def device_code(self) -> str:
        """How emitted code reads the device: ``_DEVICE()`` or ``device``."""
        return self.device_name + ("()" if self.device_call else "")

    def claim(self, node: cst.CSTNode) -> None:
        """Keep the other passes off ``node`` and everything inside it."""
        self.claimed.update(walk(node))

    def suppressed(self, line: int, code: str) -> bool:
        if line not in self.noqa:
            return False
        codes = self.noqa[line]
        return codes is None or any(code.startswith(c) for c in codes)

    def decide(
        self,
        rule: Rule,
        line: int,
        col: int,
        message: str = "",
        fix: Optional[Fix] = None,
        end: Optional[Tuple[int, int]] = None,
        min_torch: Optional[TorchVersion] = None,
    ) -> bool:
        """Record the site and say whether its fix may be applied.

        ``fix`` overrides the rule's fix kind for this one site (a site can be less
        safe than the rule's usual case, or have no fix at all); ``min_torch`` is the
        release this site's fix needs where it is newer than the rule's.
        """
        suppressed = self.suppressed(line, rule.code)
        if suppressed:  # black must not move the site off its noqa's line
            self.suppressed_lines.add(line)
        options, gate, min_torch = site_options(self, line, rule, min_torch)
        decision = decide(
            rule, options, suppressed=suppressed, fix=fix, min_torch=min_torch
        )
        if not decision.shown:
            return False
        fix = fix or rule.fix
        span, end_col = (end[0] - line, end[1]) if end else (0, None)
        self.diagnostics.append(
            Diagnostic(
                "",
                line,
                col,
                rule.code,
                rule.name,
                (message or rule.message) + decision.note + (decision.note and gate),
                fix.value,
                decision.apply,
                end_col=end_col,
                span_lines=span,
                severity=rule.severity,
                unsafe_available=decision.unsafe_available,
                needs_torch=decision.needs_torch,
            )
        )
        return decision.apply


class Pass(cst.CSTTransformer):
    """Base class of a transform pass. Subclasses set RULES and TRIGGER.

    A pass sees one chunk of the file at a time (``codemod.rewrite.chunks``), together with
    the other passes in a single traversal; module-wide facts are in
    ``self.context.facts``.
    """

    METADATA_DEPENDENCIES = (PositionProvider,)
    RULES: ClassVar[Tuple[Rule, ...]] = ()
    # The pass runs only on files whose text matches this pattern, and sees the
    # statements whose lines match it (codemod.rewrite.chunks).
    TRIGGER: ClassVar[Pattern[str]] = re.compile("cuda")
    # More lines that can hold its sites once it runs (`device_ids=` of DDP).
    HITS: ClassVar[Optional[Pattern[str]]] = None
    # Lines whose whole top-level statement the pass must see (a variable followed
    # from its assignment to its use).
    CONTEXT: ClassVar[Optional[Pattern[str]]] = None
    # Lines whose enclosing function the pass must see whole (the checks around a
    # statement); their top-level statement where no function encloses them.
    FUNCTION_CONTEXT: ClassVar[Optional[Pattern[str]]] = None

    def __init__(self, context: FileContext) -> None:
        super().__init__()
        self.context = context
        self.changed = False

    @classmethod
    def hits_in(cls, source: str) -> Optional[Pattern[str]]:
        """``HITS`` for this file (a pass may need them only in some files)."""
        return cls.HITS

    # -- names ----------------------------------------------------------------
    def qualified_name(self, node: cst.CSTNode) -> Optional[str]:
        """``th.cuda.synchronize`` -> ``torch.cuda.synchronize``, resolved through the
        module's imports; None when the name is not imported or is shadowed."""
        facts = self.context.facts
        if not facts.shadowed:
            return facts.qualified_name(node)
        try:  # a name some function or class also binds: it depends on where
            line = self.position(node)[0]
        except KeyError:  # a node built by a pass
            line = None
        return facts.qualified_name(node, line)

    def callee(self, call: cst.Call) -> Optional[str]:
        return self.qualified_name(call.func)

    # -- decisions ------------------------------------------------------------
    def position(self, node: cst.CSTNode) -> Tuple[int, int]:
        """Line and 1-based column of ``node`` (an original node) in the file."""
        start = self.get_metadata(PositionProvider, node).start
        return (
            start.line + self.context.line_offset,
            start.column + 1 + self.context.col_offset,
        )

    def end_position(self, node: cst.CSTNode) -> Tuple[int, int]:
        """Line and 1-based column just past the end of ``node`` in the file."""
        end = self.get_metadata(PositionProvider, node).end
        return (
            end.line + self.context.line_offset,
            end.column + 1 + self.context.col_offset,
        )

    def record_and_decide(
        self,
        node: cst.CSTNode,
        code: str,
        message: str = "",
        fix: Optional[Fix] = None,
        min_torch: Optional[TorchVersion] = None,
        reads_device: Optional[bool] = None,
    ) -> bool:
        """Record a site of rule ``code`` (a diagnostic); True when its fix is to be
        applied (enabled, not suppressed, safe or allowed, and the target torch has
        it). ``reads_device``: whether this site's fix reads the device, where it is
        not what the rule's fixes do."""
        if node in self.context.claimed:
            return False
        line, col = self.position(node)
        end = self.end_position(node)
        rule = REGISTRY[code]
        fix = fix or rule.fix
        why = self._left_as_written(node)
        if why is not None:
            fix, message = Fix.NONE, (message or rule.message) + why
        reads = rule.reads_device if reads_device is None else reads_device
        if reads:
            message = message or rule.message
            fix, message = device_read_fix(self.context, line, fix, message, node, col)
        shown = len(self.context.diagnostics)
        decided = self.context.decide(rule, line, col, message, fix, end, min_torch)
        self.changed |= decided
        if self.context.import_reports:  # a use of a reported import's name
            name = head_name(node)
            if name in self.context.import_reports:
                # rewritten, informational, or suppressed: not left as an error
                left = len(self.context.diagnostics) > shown and not decided
                settled = not left or rule.severity == "info"
                self.context.import_uses.setdefault(name, []).append(settled)
        return decided

    def _left_as_written(self, node: cst.CSTNode) -> Optional[str]:
        """Why the site is reported rather than fixed, whatever its rule: a test of
        this file patches what it calls, it is a CUDA test widening would turn into
        CUDA's code run elsewhere (``kept_for_cuda``), or a function the module
        compiles holds it (``compiled``); None otherwise."""
        context = self.context
        patched = ""
        if context.patched or context.patched_elsewhere:  # what the site calls
            calls = [n for n in walk(node) if isinstance(n, cst.Call)]
            names = {self.qualified_name(n) for n in [node, *calls]}
            patched = patch_reason(names, context.patched, context.patched_elsewhere)
        kept = context.kept_for_cuda.get(node)
        if kept is None and context.kept_flags and isinstance(node, cst.Call):
            kept = context.kept_flags.get(self.position(node))
        if kept is None and context.compiled:
            kept = compiled_reason(context.compiled, self.position(node)[0])
        return None if not patched and kept is None else patched + (kept or "")

    def would_apply(
        self, node: cst.CSTNode, code: str, min_torch: Optional[TorchVersion] = None
    ) -> bool:
        """Whether a site of rule ``code`` at ``node`` will be fixed (as
        ``record_and_decide`` will decide it), recording nothing."""
        if node in self.context.claimed or self._left_as_written(node) is not None:
            return False
        line, col = self.position(node)
        suppressed = self.context.suppressed(line, code)
        rule = REGISTRY[code]
        fix = rule.fix
        if rule.reads_device:
            fix, _ = device_read_fix(self.context, line, fix, "", node, col)
        options, _, min_torch = site_options(self.context, line, rule, min_torch)
        return decide(
            rule, options, suppressed=suppressed, fix=fix, min_torch=min_torch
        ).apply

    def drop_import_if_unused(
        self, module: str, name: Optional[str] = None, alias: Optional[str] = None
    ) -> None:
        """Remove ``from module import name as alias`` (wherever it is) after the
        passes, if nothing uses it any more."""
        entry = (None, module, name, alias)
        if entry not in self.context.unused_imports:
            self.context.unused_imports.append(entry)

    def report(self, node: cst.CSTNode, code: str, message: str = "") -> None:
        """Record a site that is left as it is (no fix for this site)."""
        self.record_and_decide(node, code, message, Fix.NONE)

    # -- code to emit ---------------------------------------------------------
    def device(self) -> cst.BaseExpression:
        """The module's device (a torch.device): ``_DEVICE()``, the accessor that asks
        for the accelerator on first use, or the module's own device variable."""
        self.context.needs_device = True
        name = cst.Name(self.context.device_name)
        return cst.Call(name) if self.context.device_call else name

    def device_type(self) -> cst.Attribute:
        """``_DEVICE().type``: the device as a string."""
        return cst.Attribute(self.device(), cst.Name("type"))

    def expr(self, template: str, **values: cst.BaseExpression) -> cst.BaseExpression:
        """Parse ``template`` with ``{torch}`` and ``{device}`` filled in.

        ``values`` are substituted as libcst nodes (see parse_template_expression).
        """
        if "{device}" in template:
            self.device()
        if "{torch}" in template:
            self.context.needs_torch = True
        code = template.replace("{torch}", self.context.torch_name).replace(
            "{device}", self.context.device_code
        )
        if values:
            from libcst.helpers import parse_template_expression

            return parse_template_expression(code, **values)
        return cst.parse_expression(code)
