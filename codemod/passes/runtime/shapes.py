"""The rewrites of the runtime pass, each registered by name with ``@shape(name)``.

A catalogue row names its rewrite (``Row.rewrite``); the pass applies
``SHAPES[row.rewrite]``. A shape is a plain function ``(runtime, original, updated,
row, short)``: the pass (for its decisions, templates and the guard it emits), the
call as written and as the passes below it left it, the row, and the name as the
message says it (``cuda.synchronize``, or the method's name). It records the site and
returns what the call becomes (``updated`` when it is left as it is). The pass's
rows that name no shape here fail at import (``shape_of``).
"""

from __future__ import annotations

from typing import Callable, Dict, Optional

import libcst as cst

from codemod import catalog
from codemod.catalog import Row
from codemod.model.rule import Fix
from codemod.passes.guards import is_binding_type
from codemod.passes.names import dotted_name
from codemod.passes.runtime.arguments import mapped_arguments
from codemod.passes.runtime.cpu_guard import guard_test
from codemod.passes.runtime.per_device import NOT_A_STATEMENT, get_all, set_all_loop
from codemod.passes.runtime.seeds import CPU_STATE_KEPT, removed_message
from codemod.passes.runtime.tables import (
    INT,
    METHOD_KINDS,
    STREAM,
    is_name,
)

Shape = Callable[..., cst.BaseExpression]
NO_NEW_API = (1, 0)  # a fix that writes nothing new (a removal): every target
SHAPES: Dict[str, Shape] = {}


def shape(name: str) -> Callable[[Shape], Shape]:
    """Register the decorated function as the rewrite called ``name``."""

    def register(function: Shape) -> Shape:
        if name in SHAPES:
            raise ValueError(f"rewrite shape {name!r} defined twice")
        SHAPES[name] = function
        return function

    return register


def shape_of(name: str) -> Shape:
    """The rewrite called ``name``; a row naming no shape is a catalogue error."""
    try:
        return SHAPES[name]
    except KeyError:
        raise LookupError(
            f"no rewrite shape {name!r} in codemod.passes.runtime.shapes"
        ) from None


METHOD_MESSAGES = {
    "synchronize": "`.synchronize()` of a CUDA stream: torch.cpu's no-op stream has "
    "none; kept for accelerators",
    "query": "`.query()` of a CUDA stream: torch.cpu's no-op stream has none; True "
    "on the CPU",
    "record_stream": "`.record_stream(stream)`: CPU tensors have none; kept for "
    "accelerators",
}
UNKNOWN_STREAM = (
    "`torch.cuda.stream(s)` where torchport cannot tell that `s` is a stream made "
    "here (it may be None, which CUDA ignores), or not entered by `with` itself: use "
    "`with s:` where `s` is a torch.Stream (torch >= 2.7)"
)
UNKNOWN_EVENT = (
    "`.elapsed_time()` of an object torchport cannot tell is a CUDA event: left as it "
    'is; CPU events cannot time (use `... if _DEVICE().type != "cpu" else float("nan")` '
    "or a host timer)"
)


@shape("report")
def report(runtime, original, updated, row: Row, short: str):
    """No portable form: reported with the row's advice."""
    runtime.report(original, row.code, f"`torch.{short}`: {row.advice}")
    return updated


@shape("call")
def call(runtime, original, updated, row: Row, short: str):
    """Another callee taking the same arguments (moved where it takes them by
    position), behind the guard when the row has a CPU value."""
    args = mapped_arguments(updated.args, catalog.PARAMS.get(row.name))
    if isinstance(args, str):  # not exact: said why
        target = row.portable.format(torch="torch", device="_DEVICE()")  # type: ignore
        runtime.report(original, row.code, f"`torch.{short}(...)`: {args} ({target})")
        return updated
    if not runtime.applied(original, row.code, min_torch=row.min_torch):
        return updated
    new = updated.with_changes(func=runtime.expr(row.portable), args=args)
    if row.cpu is None:
        return new
    return runtime.guard.expression(original, new, row.cpu)


# What a torch.cuda stream or event has that torch.Stream and torch.Event lack.
RAW_HANDLES = {
    "TP305": ("cuda_stream", "torch.Stream"),
    "TP306": ("cuda_event", "torch.Event"),
}


@shape("stream_object")
def stream_object(runtime, original, updated, row: Row, short: str):
    """A stream or an event made by torch itself (``torch.Stream``,
    ``torch.accelerator.current_stream()``, ``torch.Event``), as ``call`` writes it;
    in a module that names the CUDA handle they lack (``.cuda_stream``; the word
    anywhere, as the pass cannot follow every object to it), reported."""
    handle, kind = RAW_HANDLES[row.code]
    if handle in runtime.context.facts.identifiers:
        runtime.report(
            original,
            row.code,
            f"`torch.{short}(...)`: the module names `{handle}`, the CUDA handle a "
            f"{kind} lacks: left as it is",
        )
        return updated
    return call(runtime, original, updated, row, short)


@shape("stream_context")
def stream_context(runtime, original, updated, row: Row, short: str):
    """``with torch.cuda.stream(s):`` becomes ``with s:`` (a torch.Stream is a
    context manager: it makes itself current, on its device, and restores both), and
    ``torch.cpu.stream(s)`` on the CPU, where ``s`` is torch.cpu's stand-in. Only
    where ``s`` is known to be a stream (``torch.cuda.stream(None)`` is a no-op) and
    the call is what the ``with`` enters (no ``as``: the two give other values).

    A stream of unknown origin (a parameter, an attribute: ``with
    torch.cuda.stream(self.side):``) may be None, which CUDA ignores, or a
    torch.cuda.Stream made elsewhere (a torch.Stream too): read twice, when it is
    a name or an attribute of one, ``with s if s is not None ...`` enters it only
    where it is one, and ``torch.cpu.stream(s)``, a no-op for None, otherwise."""
    value = _only_argument(original, "stream")
    known = value is not None and runtime.objects.kind(value) == STREAM
    named = value is not None and dotted_name(value) not in (None, "None")
    if original not in runtime.with_items or not (known or named):
        runtime.report(original, row.code, UNKNOWN_STREAM)
        return updated
    if not runtime.applied(original, row.code, min_torch=row.min_torch):
        return updated
    stream = _only_argument(updated, "stream")
    accelerated = runtime.in_accelerated_branch()
    if known and accelerated:
        return stream
    tests = ([] if known else ["{stream} is not None"]) + (
        [] if accelerated else [guard_test()]
    )
    return runtime.expr(
        "{stream} if " + " and ".join(tests) + " else " + row.portable + "({stream})",
        stream=stream,
    )


@shape("seed")
def seed(runtime, original, updated, row: Row, short: str):
    """A CUDA seed: removed where it repeats a ``torch.manual_seed`` (``seeds``);
    otherwise as ``call`` writes it, or reported where the row has no portable
    form (``manual_seed`` seeds the current CUDA device only)."""
    if original in runtime.repeated_seeds:
        message = removed_message(original, short)
        if runtime.record_and_decide(
            original, row.code, message, min_torch=NO_NEW_API, reads_device=False
        ):
            runtime.removed.add(original)
        return updated
    if row.portable is None:
        return report(runtime, original, updated, row, short)
    if _only_argument(updated, "seed") is None:
        runtime.report(original, row.code, f"`torch.{short}(...)`: takes one seed")
        return updated
    if not runtime.applied(
        original, row.code, min_torch=row.min_torch, reads_device=False
    ):
        return updated
    seeded = updated.with_changes(func=runtime.expr(row.portable))
    return runtime.expr(CPU_STATE_KEPT, seeded=seeded)


@shape("rng_state_all")
def rng_state_all(runtime, original, updated, row: Row, short: str):
    """``get_rng_state_all()``: a list of each device's state; ``set_rng_state_all(
    states)``, a statement: a loop setting each (``per_device``)."""
    if short.endswith("get_rng_state_all"):
        if updated.args:
            runtime.report(original, row.code, "`torch.{short}(...)`: takes nothing")
            return updated
        if not runtime.applied(original, row.code, min_torch=row.min_torch):
            return updated
        return get_all(runtime)
    states = _only_argument(updated, "new_states")
    if states is None or original not in runtime.loops.alone:
        runtime.report(original, row.code, NOT_A_STATEMENT)
        return updated
    if not runtime.applied(original, row.code, min_torch=row.min_torch):
        return updated
    guarded = not runtime.in_accelerated_branch()
    runtime.loops.statements[original] = set_all_loop(runtime, states, guarded)
    return updated


@shape("cuda_kept")
def cuda_kept(runtime, original, updated, row: Row, short: str):
    """No accelerator API has it: the call is kept for CUDA, and elsewhere takes the
    row's value (``get_device_name``: the device type). Its import stays."""
    if original in runtime.cuda_branch:  # written so already
        return updated
    message = f"`torch.{short}(...)`: {row.advice}"
    if not runtime.record_and_decide(original, row.code, message, None, row.min_torch):
        return updated
    return runtime.guard.cuda_only(original, updated, row.portable)  # type: ignore


@shape("name")
def name(runtime, original, updated, row: Row, short: str):
    """A class with another name (raised or caught): only the name changes."""
    if not runtime.applied(original, row.code, min_torch=row.min_torch):
        return updated
    return updated.with_changes(func=runtime.expr(row.portable))


DEVICE_OF = "`torch.cuda.device_of(t)` only knows CUDA"
READ_TWICE = ": its argument would be read twice; name it first"


@shape("device_of")
def device_of(runtime, original, updated, row: Row, short: str):
    """``with torch.cuda.device_of(t):`` (t's CUDA device, a no-op for a tensor
    elsewhere): ``device_index`` of t's device, a no-op on the CPU. ``t`` is read
    twice, so only a name or an attribute of one is."""
    value = _only_argument(original, "obj")
    if value is None or dotted_name(value) is None:
        runtime.report(original, row.code, DEVICE_OF + READ_TWICE)
        return updated
    if not runtime.applied(original, row.code, DEVICE_OF, min_torch=row.min_torch):
        return updated
    template = '{obj}.device.index if {obj}.device.type != "cpu" else None'
    index = runtime.expr(template, obj=_only_argument(updated, "obj"))
    return runtime.expr(row.portable + "({index})", index=index)


INDEX_ASSUMED = "the device is assumed to be an int index"
DEVICE_GIVEN = "`x.device` is assumed to be a torch.device: its `.index` is taken"


@shape("device_index")
def device_index(runtime, original, updated, row: Row, short: str):
    """``with torch.cuda.device(i):``: ``device_index(i)`` on an accelerator,
    ``device_index(None)`` (a no-op) on the CPU."""
    value = _device_index_arg(original)
    if value is None:
        runtime.report(original, row.code)
        return updated
    literal = is_name(value, "None") or runtime.objects.kind(value) == INT
    # `torch.cuda.device(x.device)`: a torch.device, whose index is the int one
    device = isinstance(value, cst.Attribute) and value.attr.value == "device"
    message = "" if literal else DEVICE_GIVEN if device else INDEX_ASSUMED
    fix = None if literal else Fix.UNSAFE
    if not runtime.applied(original, row.code, message, fix, row.min_torch):
        return updated
    index = _device_index_arg(updated)
    if device and not literal:
        index = cst.Attribute(index, cst.Name("index"))  # type: ignore[arg-type]
    accelerated = runtime.in_accelerated_branch()  # the guard is true there
    if not is_name(index, "None") and not accelerated:  # type: ignore[arg-type]
        index = runtime.expr("{index} if " + guard_test() + " else None", index=index)
    return runtime.expr(row.portable + "({index})", index=index)


@shape("index_as_device")
def index_as_device(runtime, original, updated, row: Row, short: str):
    """A device index used as a device means that device: on CUDA
    ``torch.device("cuda", i)``, exactly what the int selects."""
    if row.kind == "method":  # x.get_device()
        message = (
            "`x.get_device()` is -1 for a tensor on the CPU, which no device "
            "argument takes: `x.device` is the same device everywhere"
        )
        if not runtime.record_and_decide(original, row.code, message):
            return updated
        return cst.Attribute(updated.func.value, cst.Name("device"))  # type: ignore
    message = (
        "`torch.cuda.current_device()` used as a device becomes the current "
        "accelerator device (the device binding on the CPU)"
    )
    if not runtime.applied(original, row.code, message):
        return updated
    device = runtime.expr(
        "{torch}.device({device}.type, {torch}.accelerator.current_device_index())"
    )
    return runtime.guard.expression(original, device, runtime.context.device_code)


@shape("fork_rng")
def fork_rng(runtime, original, updated, row: Row, short: str):
    """``fork_rng(devices=...)``: ``device_type=_DEVICE().type`` added, no devices on
    the CPU."""
    args = list(updated.args)
    keyword = {a.keyword.value: i for i, a in enumerate(args) if a.keyword}
    positional = [i for i, a in enumerate(args) if a.keyword is None]
    if any(a.star for a in args) or len(positional) > 1:
        return updated
    devices = keyword.get("devices", positional[0] if positional else None)
    device_type = keyword.get("device_type")
    ours = device_type is not None and _is_device_type(runtime, args[device_type].value)
    if (device_type is not None and not ours) or (devices is None and not ours):
        return updated  # a plain fork_rng(), or a device type of the user's
    if devices is not None and isinstance(args[devices].value, cst.IfExp):
        return updated  # already guarded
    if not runtime.record_and_decide(original, row.code, min_torch=row.min_torch):
        return updated
    value = args[devices].value if devices is not None else cst.Name("None")
    value = runtime.guard.unwrap_within(value)  # under the guard of the devices
    guarded = runtime.expr("{value} if " + guard_test() + " else []", value=value)
    if devices is not None:
        args[devices] = args[devices].with_changes(value=guarded)
    else:
        args.insert(0, cst.Arg(guarded, keyword=cst.Name("devices")))
    if device_type is None:
        args.append(cst.Arg(runtime.device_type(), keyword=cst.Name("device_type")))
    no_space = cst.SimpleWhitespace("")
    equal = cst.AssignEqual(whitespace_before=no_space, whitespace_after=no_space)
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    args = [
        a.with_changes(
            comma=comma if i < len(args) - 1 else cst.MaybeSentinel.DEFAULT,
            equal=equal if a.keyword else a.equal,
        )
        for i, a in enumerate(args)
    ]
    return updated.with_changes(args=args)


@shape("object_method")
def object_method(runtime, original, updated, row: Row, short: str):
    """A method torch.cpu's no-op events and streams lack, called on an object
    known to be a CUDA event or stream (``x.record_stream(stream)``: the
    argument): kept for accelerators, its CPU value on the CPU."""
    method = short
    args = original.args
    if method == "record_stream":
        known = len(args) == 1 and runtime.objects.kind(args[0].value) == STREAM
    else:
        kind = runtime.objects.kind(original.func.value)
        known = kind == METHOD_KINDS[method]
    if method == "elapsed_time" and len(args) != 1:
        known = False
    if original in runtime.guarded:
        return updated
    if not known:
        if method == "elapsed_time" and runtime.maybe_cuda_event():
            runtime.report(original, "TP307", UNKNOWN_EVENT)
        return updated
    message = METHOD_MESSAGES.get(method, "")
    if not runtime.record_and_decide(original, row.code, message, None, row.min_torch):
        return updated
    # Under this guard, the stream it is called on (or given) needs none of its own.
    unwrap = runtime.guard.unwrap
    updated = updated.with_changes(
        func=updated.func.with_changes(value=unwrap(updated.func.value)),
        args=[a.with_changes(value=unwrap(a.value)) for a in updated.args],
    )
    return runtime.guard.expression(original, updated, row.cpu)  # type: ignore


def _is_device_type(runtime, node: cst.CSTNode) -> bool:
    """``_DEVICE().type``, as the device-string rules write it."""
    return is_binding_type(node, runtime.context.device_name)


def _device_index_arg(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The one argument of ``torch.cuda.device(...)``, if it has the usual form."""
    return _only_argument(call, "device")


def _only_argument(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    """The one argument of ``call``, by position or as ``name=``, if it has one."""
    args = call.args
    if len(args) != 1 or args[0].star:
        return None
    if args[0].keyword is not None and args[0].keyword.value != name:
        return None
    return args[0].value
