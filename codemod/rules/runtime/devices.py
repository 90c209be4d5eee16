"""TP301-TP307 and TP314: devices, synchronization, streams and events of the
``torch.cuda`` runtime API, as data (``codemod.rules.runtime`` gathers the family)."""

from __future__ import annotations

from codemod.model.versions import ACCELERATOR_TORCH, DEVICE_INDEX_TORCH
from codemod.model.rule import Fix, Rule
from codemod.rules.examples import EXAMPLE_BINDING

RULES = (
    Rule(
        "TP301",
        "cuda-availability",
        "`torch.cuda.is_available()` / `device_count()` only know CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="Rewrites `torch.cuda.is_available()` and `torch.cuda.device_count()` to "
        "their `torch.accelerator` equivalents.",
        why="They then count TPU, Trainium, MPS, XPU or NPU devices too.",
        before=(
            "import torch\n"
            "\n"
            "if torch.cuda.device_count() > 1:\n"
            '    print("several devices")'
        ),
        after=(
            "import torch\n"
            "\n"
            "if torch.accelerator.device_count() > 1:\n"
            '    print("several devices")'
        ),
        valid=(
            (
                "import torch\n"
                "\n"
                "if torch.accelerator.is_available():\n"
                "    print(torch.accelerator.device_count())"
            ),
            (
                "import torch\n"
                "\n"
                "if torch.backends.mps.is_available():\n"
                '    x = torch.ones(2, device="mps")'
            ),
            (
                "import torch\n"
                "\n"
                "if torch.cuda.is_available():\n"
                '    torch.cuda.nvtx.range_push("step")'
            ),
        ),
        safety="Safe: the same answers on CUDA and on CPU-only machines. An "
        "`is_available()` or `device_count()` test that guards code that stays "
        "CUDA-only (nvtx, CUDA graphs, `nn.DataParallel`, other `torch.cuda` calls "
        'without a portable form, "cuda" strings left in place, apex, pynvml, ...) is '
        "left as it is, and so is an early exit "
        "(`if not torch.cuda.is_available(): return`, a clean `sys.exit(0)`, a test "
        "skip) before such code in its block, and a check "
        'that takes the CPU when "cuda" was asked for and is missing (`if args.device '
        '== "cuda" and not torch.cuda.is_available():`, or plainly `if not '
        'torch.cuda.is_available(): args.device = "cpu"`). A call to a function of '
        "the program's own named for CUDA (`dtw_cuda(x)`) counts as CUDA-only code. "
        'A hard requirement (`assert torch.cuda.is_available(), "needs a GPU"`, `if '
        "not torch.cuda.is_available(): raise ...` or `sys.exit(message)`) becomes one "
        "of an accelerator whatever follows, its message unchanged: it stops only "
        "where no accelerator is, so what follows runs only where the original "
        "stopped.",
    ),
    Rule(
        "TP302",
        "cuda-current-device",
        "`torch.cuda.current_device()` / `set_device()` only know CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="`current_device()` becomes `torch.accelerator.current_device_index()` and "
        "`set_device(i)` becomes `torch.accelerator.set_device_index(i)`, both behind "
        '`_DEVICE().type != "cpu"` (index 0 and a no-op on the CPU). Where the index is '
        "passed as a device (`device=`, `.to(...)`, `torch.device(...)`), "
        "`current_device()` becomes `torch.device(_DEVICE().type, "
        "torch.accelerator.current_device_index())` (`_DEVICE()` on the CPU) and "
        "`x.get_device()` becomes `x.device`.",
        why="The torch.accelerator calls raise without an accelerator.",
        before=("import torch\n" "\n" "torch.cuda.set_device(local_rank)"),
        after=EXAMPLE_BINDING
        + (
            'if _DEVICE().type != "cpu":\n'
            "    torch.accelerator.set_device_index(local_rank)"
        ),
        valid=(
            ("import torch\n" "\n" "x = torch.ones(2)\n" "print(x.get_device())"),
            (
                "import torch\n"
                "\n"
                "\n"
                "class Shard:\n"
                "    def get_device(self):\n"
                "        return 0\n"
                "\n"
                "\n"
                "x = torch.zeros(2, device=Shard().get_device())"
            ),
        ),
        safety="Safe: unchanged on CUDA; on the CPU the index is 0.",
    ),
    Rule(
        "TP303",
        "cuda-device-context",
        "`torch.cuda.device(i)` only knows CUDA",
        Fix.SAFE,
        DEVICE_INDEX_TORCH,
        what="`with torch.cuda.device(i):` becomes `with torch.accelerator.device_index("
        'i if _DEVICE().type != "cpu" else None):`.',
        why="`device_index(i)` raises without an accelerator; `device_index(None)` is a "
        "no-op.",
        before=(
            "import torch\n" "\n" "with torch.cuda.device(1):\n" "    x = torch.ones(2)"
        ),
        after=EXAMPLE_BINDING
        + (
            'with torch.accelerator.device_index(1 if _DEVICE().type != "cpu" else None):\n'
            "    x = torch.ones(2)"
        ),
        valid=(
            (
                "import torch\n"
                "\n"
                'with torch.device("cpu"):\n'
                "    x = torch.ones(2)"
            ),
        ),
        safety="Safe where the index is known to be an int: a literal, a call that "
        "gives one (`int(...)`, `len(...)`, `current_device()`, `device_count()`, "
        "`x.get_device()`), or a variable of the same function (or module) always "
        "bound so or by `for i in range(...)`. Any other index is assumed to be an "
        "int, not a torch.device or a string (unsafe).",
    ),
    Rule(
        "TP304",
        "cuda-synchronize",
        "`torch.cuda.synchronize()` only knows CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="Rewrites `torch.cuda.synchronize(device)` to "
        '`torch.accelerator.synchronize(device)`, behind `_DEVICE().type != "cpu"`.',
        why="`torch.accelerator.synchronize()` is what every accelerator implements "
        "(a backend's device module need not have `synchronize`); it raises without "
        "an accelerator, where there is nothing to wait for.",
        before=("import torch\n" "\n" "torch.cuda.synchronize()"),
        after=EXAMPLE_BINDING
        + 'if _DEVICE().type != "cpu":\n    torch.accelerator.synchronize()',
        valid=(
            ("import torch\n" "\n" "torch.cpu.synchronize()"),
            (
                "class Clock:\n"
                "    def synchronize(self):\n"
                "        pass\n"
                "\n"
                "\n"
                "Clock().synchronize()"
            ),
        ),
        safety="Safe: on CUDA it waits for the same device (the current one, or the "
        "one given). It does not initialise CUDA where torch.cuda.synchronize() "
        "would: before CUDA is initialised there is no work to wait for.",
    ),
    Rule(
        "TP305",
        "cuda-stream",
        "`torch.cuda` streams only know CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="`torch.cuda.Stream(...)` becomes `torch.Stream(...)` and "
        "`current_stream(device)` `torch.accelerator.current_stream(device)`, both "
        'behind `_DEVICE().type != "cpu"` (torch.cpu\'s no-op `Stream()` and '
        "`current_stream()` on the CPU); `set_stream(s)` becomes "
        "`torch.accelerator.set_stream(s)` behind it. `with torch.cuda.stream(s):` "
        "becomes `with s:` (torch >= 2.7; `torch.cpu.stream(s)` on the CPU) where `s` "
        "is known to be such a stream; a stream handed in by name (a parameter, an "
        "attribute), which may be None, is entered where `s is not None`. On a stream known by its binding (made by one "
        "of these calls, in the same function, or an attribute always set so), "
        "`.synchronize()` and `.query()`, and `x.record_stream(stream)`, are kept for "
        'accelerators: a statement goes behind `if _DEVICE().type != "cpu":`, '
        "`query()` is True on the CPU. `default_stream()` is reported: no "
        "accelerator API names the default stream.",
        why="torch.Stream and torch.accelerator's streams are what every accelerator "
        "implements; a backend's device module need not have `Stream`, "
        "`current_stream` or `stream` (torch.mps has none, torch.xpu no "
        "`default_stream`). On the CPU a torch.Stream cannot `wait_stream`, so "
        "torch.cpu's no-op streams stand in; they have no `synchronize` or `query`, "
        "and CPU tensors have no `record_stream`.",
        before=(
            "import torch\n"
            "\n"
            "s = torch.cuda.Stream()\n"
            "with torch.cuda.stream(s):\n"
            "    x = torch.ones(2)\n"
            "s.synchronize()"
        ),
        after=EXAMPLE_BINDING
        + (
            's = torch.Stream() if _DEVICE().type != "cpu" else torch.cpu.Stream()\n'
            'with s if _DEVICE().type != "cpu" else torch.cpu.stream(s):\n'
            "    x = torch.ones(2)\n"
            'if _DEVICE().type != "cpu":\n'
            "    s.synchronize()"
        ),
        valid=(
            (
                "import torch\n"
                "\n"
                "\n"
                "def finish(x, stream):\n"
                "    x.record_stream(stream)\n"
                "    stream.synchronize()"
            ),
            (
                "import torch\n"
                "\n"
                "with torch.cpu.stream(torch.cpu.Stream()):\n"
                "    x = torch.ones(2)"
            ),
        ),
        safety="Safe: on CUDA `torch.Stream()` is a new stream of the current device, "
        "from the same pool and with the priority given, as `torch.cuda.Stream()`; "
        "`current_stream()` is the same stream; `with s:` makes `s` current on its "
        "device and restores the previous stream and device, as "
        "`torch.cuda.stream(s)` does. They are torch.Stream objects, without "
        "`.cuda_stream`: in a module that reads it they are reported instead. A "
        "`torch.cuda.stream(s)` given what may be None (a no-op there) is reported.",
    ),
    Rule(
        "TP306",
        "cuda-event",
        "`torch.cuda.Event` only knows CUDA",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="`torch.cuda.Event(enable_timing)` becomes "
        "`torch.Event(enable_timing=...)` on an accelerator and `torch.cpu.Event()` on "
        "the CPU. `blocking=`, `interprocess=` or `external=` other than False is "
        "reported: torch.Event does not honour them.",
        why="torch.Event is what every accelerator implements (a backend's device "
        "module need not have `Event`); a CPU torch.Event cannot `record()`, torch.cpu "
        "events record and wait as no-ops.",
        before=(
            "import torch\n"
            "\n"
            "\n"
            "def timer():\n"
            "    start = torch.cuda.Event(enable_timing=True)\n"
            "    return start"
        ),
        after=EXAMPLE_BINDING
        + (
            "def timer():\n"
            "    start = (\n"
            "        torch.Event(enable_timing=True)\n"
            '        if _DEVICE().type != "cpu"\n'
            "        else torch.cpu.Event()\n"
            "    )\n"
            "    return start"
        ),
        valid=(
            ("import threading\n" "\n" "done = threading.Event()"),
            ("import torch\n" "\n" "marker = torch.cpu.Event()\n" "marker.record()"),
        ),
        safety="Safe: on CUDA the same CUDA event (timing or not, created when first "
        "recorded, on the recording stream's device), with the same methods; it is a "
        "torch.Event, without `.cuda_event`: in a module that reads it, reported.",
    ),
    Rule(
        "TP307",
        "event-elapsed-time",
        "`Event.elapsed_time()` cannot time on the CPU",
        Fix.SAFE,
        ACCELERATOR_TORCH,
        what="`start.elapsed_time(end)` on an event known by its binding (made by "
        "`torch.cuda.Event(...)` in the same function or module, an attribute always "
        "set so, or an element of a list or tuple of them that the function or "
        "module keeps to itself: `starts[i]`, `for s, e in zip(starts, ends)`, a "
        "comprehension over them, a list filled by `.append`) becomes "
        '`(start.elapsed_time(end) if _DEVICE().type != "cpu" else float("nan"))`. '
        "Other receivers are left alone (a host timer of the program's own), and "
        "reported where the module makes CUDA events and defines no `elapsed_time`.",
        why="CPU events have no timer. NaN says 'not measured' without crashing the "
        "benchmark; use `time.perf_counter()` for CPU timings.",
        before=(
            "import torch\n"
            "\n"
            "\n"
            "def timed(step):\n"
            "    start = torch.cuda.Event(enable_timing=True)\n"
            "    end = torch.cuda.Event(enable_timing=True)\n"
            "    start.record()\n"
            "    step()\n"
            "    end.record()\n"
            "    end.synchronize()\n"
            "    return start.elapsed_time(end)"
        ),
        after=EXAMPLE_BINDING
        + (
            "def timed(step):\n"
            "    start = (\n"
            "        torch.Event(enable_timing=True)\n"
            '        if _DEVICE().type != "cpu"\n'
            "        else torch.cpu.Event()\n"
            "    )\n"
            "    end = (\n"
            "        torch.Event(enable_timing=True)\n"
            '        if _DEVICE().type != "cpu"\n'
            "        else torch.cpu.Event()\n"
            "    )\n"
            "    start.record()\n"
            "    step()\n"
            "    end.record()\n"
            "    end.synchronize()\n"
            '    return start.elapsed_time(end) if _DEVICE().type != "cpu" else float("nan")'
        ),
        valid=(
            (
                "import time\n"
                "\n"
                "\n"
                "class Timer:\n"
                "    def __init__(self):\n"
                "        self.start = time.perf_counter()\n"
                "\n"
                "    def elapsed_time(self):\n"
                "        return time.perf_counter() - self.start\n"
                "\n"
                "\n"
                "print(Timer().elapsed_time())"
            ),
            (
                "import torch\n"
                "\n"
                "\n"
                "def report(start, end):\n"
                "    return start.elapsed_time(end)"
            ),
        ),
        safety="Safe: unchanged on an accelerator; on the CPU the time is NaN (the "
        "original could not run there at all).",
    ),
    Rule(
        "TP314",
        "cuda-device-name",
        "`torch.cuda.get_device_name()` only knows CUDA",
        Fix.UNSAFE,
        ACCELERATOR_TORCH,
        what='Becomes `torch.cuda.get_device_name(...) if _DEVICE().type == "cuda" else '
        "_DEVICE().type`: the call is kept for CUDA, and the device type names the "
        "device elsewhere.",
        why="No accelerator API names a device: torch.accelerator has no "
        "get_device_name, and a backend's device module need not have one (torch.mps "
        "and torch.cpu have none).",
        before=("import torch\n" "\n" "name = torch.cuda.get_device_name(0)"),
        after=EXAMPLE_BINDING
        + (
            'name = torch.cuda.get_device_name(0) if _DEVICE().type == "cuda" else '
            "_DEVICE().type"
        ),
        valid=(
            (
                "import torch\n"
                "\n"
                "if torch.xpu.is_available():\n"
                "    print(torch.xpu.get_device_name(0))"
            ),
        ),
        safety="Unsafe: the same name on CUDA; elsewhere, where the call raised, "
        'the device type ("xpu", "mps"), and where the name decides something '
        '(`"A100" in name`) that type decides it on another accelerator. Where the '
        "name only goes into text (a message field, a `print()` or logging "
        "argument) the fix is TP315's, which is safe.",
    ),
)
