"""TP9xx: CUDA-specific code with no portable equivalent, reported with advice or
kept for CUDA behind a guard: the rules, as data (no libcst).

The pass that finds and rewrites their sites is ``codemod.passes.cuda_only``.
"""

from __future__ import annotations

from codemod.model.rule import Fix, Rule
from codemod.rules.examples import EXAMPLE_BINDING

RULES = (
    Rule(
        "TP901",
        "cuda-graph",
        "CUDA graphs capture CUDA streams only; keep the capture behind "
        '`_DEVICE().type == "cuda"` and run eagerly elsewhere (`torch.accelerator.Graph`, '
        "torch >= 2.12, is the generic API where a backend supports it)",
        Fix.NONE,
        None,
        what="Reports `torch.cuda.CUDAGraph`, `torch.cuda.graph`, "
        "`torch.cuda.make_graphed_callables` and `torch.cuda.graph_pool_handle`.",
        why="Capture and replay raise without CUDA; support for `torch.accelerator."
        "Graph` varies by backend.",
        before=(
            "import torch\n"
            "\n"
            "g = torch.cuda.CUDAGraph()\n"
            "with torch.cuda.graph(g):\n"
            "    out = model(x)"
        ),
        after='if _DEVICE().type == "cuda":  # by hand\n    g = torch.cuda.CUDAGraph()\n    ...',
        safety="No fix.",
        valid=(
            (
                "import torch\n"
                "\n"
                "graph = torch.fx.symbolic_trace(model).graph\n"
                "graph.print_tabular()"
            ),
            EXAMPLE_BINDING
            + (
                'if _DEVICE().type == "cuda":\n'
                "    g = torch.cuda.CUDAGraph()\n"
                "    with torch.cuda.graph(g):\n"
                "        out = model(x)"
            ),
        ),
    ),
    Rule(
        "TP902",
        "nvtx",
        "nvtx ranges exist only in CUDA builds (they raise elsewhere); keep them for "
        'CUDA (`_DEVICE().type == "cuda"`) or use `torch.profiler.record_function(name)`',
        Fix.SAFE,
        None,
        what="`range_push`, `range_pop` and `mark` called as statements go behind "
        '`if _DEVICE().type == "cuda":`; `with torch.cuda.nvtx.range(name):` becomes '
        '`with torch.cuda.nvtx.range(name) if _DEVICE().type == "cuda" else '
        "torch.profiler.record_function(name):` (with `--unsafe-fixes`, "
        "`torch.profiler.record_function(name)` alone). Other uses are reported.",
        why="`torch.cuda.nvtx.*` raises 'NVTX functions not installed' on every build "
        "without CUDA; `record_function` labels the region on every device.",
        before=(
            "import torch\n"
            "\n"
            'with torch.cuda.nvtx.range("forward"):\n'
            '    torch.cuda.nvtx.mark("start")'
        ),
        after=EXAMPLE_BINDING
        + (
            "with (\n"
            '    torch.cuda.nvtx.range("forward")\n'
            '    if _DEVICE().type == "cuda"\n'
            '    else torch.profiler.record_function("forward")\n'
            "):\n"
            '    if _DEVICE().type == "cuda":\n'
            '        torch.cuda.nvtx.mark("start")'
        ),
        safety="Safe: unchanged on CUDA; elsewhere the marks are skipped and ranges "
        "label the PyTorch profiler's trace. The unsafe `record_function` alone moves "
        "CUDA's label from Nsight's nvtx timeline to the PyTorch profiler's (Nsight "
        "sees it only under `emit_nvtx()`).",
        valid=(
            (
                "import torch\n"
                "\n"
                'with torch.profiler.record_function("forward"):\n'
                "    out = model(x)"
            ),
            EXAMPLE_BINDING
            + ('if _DEVICE().type == "cuda":\n' '    torch.cuda.nvtx.mark("start")'),
        ),
        reads_device=False,
    ),
    Rule(
        "TP903",
        "device-capability",
        "NVIDIA compute-capability check with no portable equivalent; keep it behind "
        '`_DEVICE().type == "cuda"` (`torch.accelerator.get_device_capability()` means '
        "something else)",
        Fix.NONE,
        None,
        what="Reports `torch.cuda.get_device_capability()`, `torch.cuda.get_arch_list()` "
        "and `get_device_properties(i).major/.minor` where they are neither compared "
        "(TP316) nor only printed (TP315): unpacked, stored, returned.",
        why="SM versions are NVIDIA's. `torch.accelerator.get_device_capability()` "
        "returns supported dtypes and raises on CUDA (checked on an H200).",
        before=(
            "import torch\n"
            "\n"
            "major, minor = torch.cuda.get_device_capability()\n"
            "dtype = torch.bfloat16 if major >= 8 else torch.float16"
        ),
        after='if _DEVICE().type == "cuda" and torch.cuda.get_device_capability()[0] >= 8:',
        safety="No fix.",
        valid=(
            (
                "import sys\n"
                "\n"
                "if sys.version_info.major >= 3:\n"
                '    print("python 3")'
            ),
            EXAMPLE_BINDING
            + (
                'if _DEVICE().type == "cuda":\n'
                "    if torch.cuda.get_device_capability()[0] >= 8:\n"
                "        dtype = torch.bfloat16"
            ),
        ),
    ),
    Rule(
        "TP904",
        "cuda-extension",
        "custom CUDA kernels run only on NVIDIA GPUs; build them only for CUDA and "
        "keep a PyTorch fallback for other devices",
        Fix.NONE,
        None,
        what="Reports `torch.utils.cpp_extension.CUDAExtension`, `load(sources=[...'.cu'"
        "])`, `load_inline(cuda_sources=...)` and `CUDA_HOME`.",
        why="A .cu kernel has no meaning on a CPU, TPU, Trainium, MPS, XPU or NPU.",
        before=(
            "from torch.utils.cpp_extension import load\n"
            "\n"
            'ext = load("ops", sources=["ops.cpp", "ops_kernel.cu"])'
        ),
        after='ext = load("ops", sources=["ops.cpp", "ops_kernel.cu"]) '
        'if _DEVICE().type == "cuda" else None  # by hand, with a fallback',
        safety="No fix.",
        valid=(
            (
                "from torch.utils.cpp_extension import CppExtension, load\n"
                "\n"
                'ext = load("ops", sources=["ops.cpp"])\n'
                'module = CppExtension("ops", ["ops.cpp"])'
            ),
        ),
    ),
    Rule(
        "TP905",
        "cuda-visible-devices",
        "`CUDA_VISIBLE_DEVICES` selects NVIDIA GPUs only (each vendor has its own "
        "variable); select devices in the launcher, or in code with "
        "`torch.accelerator.set_device_index`",
        Fix.NONE,
        None,
        what='Reports the string "CUDA_VISIBLE_DEVICES" (`os.environ` reads and writes).',
        why="Setting it does nothing on other accelerators; reading it says nothing "
        "about them.",
        before=(
            "import torch\n" "\n" 'os.environ["CUDA_VISIBLE_DEVICES"] = str(local_rank)'
        ),
        after="torch.accelerator.set_device_index(local_rank)  # by hand",
        safety="No fix.",
        valid=(
            (
                "import os\n"
                "\n"
                "# launch with CUDA_VISIBLE_DEVICES=0 to pick the first GPU\n"
                'os.environ["OMP_NUM_THREADS"] = "4"'
            ),
        ),
    ),
    Rule(
        "TP906",
        "pynvml",
        "pynvml talks to NVIDIA's driver only; for memory use `torch.accelerator."
        "memory_allocated()` / `get_memory_info()` (torch 2.9 / 2.10), for counts "
        "`torch.accelerator.device_count()`",
        Fix.NONE,
        None,
        what="Reports `import pynvml` and every use of it.",
        why="The import or `nvmlInit()` fails on every machine without an NVIDIA "
        "driver.",
        before=(
            "import pynvml\n"
            "\n"
            "pynvml.nvmlInit()\n"
            "h = pynvml.nvmlDeviceGetHandleByIndex(0)\n"
            "free = pynvml.nvmlDeviceGetMemoryInfo(h).free"
        ),
        after="free, total = torch.accelerator.get_memory_info()  # by hand",
        safety="No fix.",
        valid=(("import psutil\n" "\n" "free = psutil.virtual_memory().available"),),
    ),
    Rule(
        "TP907",
        "apex",
        "NVIDIA apex is CUDA-only; use the PyTorch equivalent",
        Fix.NONE,
        None,
        what="Reports imports of `apex`, with the PyTorch replacement of the part "
        "imported (amp, optimizers, parallel, normalization).",
        why="apex builds CUDA kernels and does not install elsewhere; PyTorch has "
        "absorbed most of it.",
        before="from apex.optimizers import FusedAdam",
        after="optimizer = torch.optim.AdamW(params, fused=True)  # by hand",
        safety="No fix.",
        valid=(("apex = max(heights)\n" "print(apex)"),),
    ),
    Rule(
        "TP908",
        "profiler-cuda-activity",
        "`ProfilerActivity.CUDA` traces CUDA only; use "
        "`torch.profiler.supported_activities()` (every activity this build can trace)",
        Fix.NONE,
        None,
        what="Reports `torch.profiler.ProfilerActivity.CUDA`, and the profiler's CUDA "
        'columns by name (`table(sort_by="cuda_time_total")`, '
        '`"self_cuda_memory_usage"`) or as attributes (`e.cuda_time_total`).',
        why="Other accelerators have their own activity (XPU, MTIA, PrivateUse1).",
        before=(
            "from torch.profiler import ProfilerActivity\n"
            "\n"
            "activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]"
        ),
        after="activities=torch.profiler.supported_activities()",
        safety="No fix: the trace would contain other activities than before.",
        valid=(
            (
                "from torch.profiler import ProfilerActivity, profile\n"
                "\n"
                "with profile(activities=[ProfilerActivity.CPU]) as prof:\n"
                "    model(x)\n"
                'print(prof.key_averages().table(sort_by="cpu_time_total"))'
            ),
        ),
    ),
    Rule(
        "TP909",
        "compile-cuda-graph-mode",
        "this torch.compile mode uses CUDA graphs; other backends ignore or reject it: "
        'pass it only when `_DEVICE().type == "cuda"`',
        Fix.NONE,
        None,
        what='Reports `torch.compile(mode="reduce-overhead")` and '
        '`mode="max-autotune"`, `backend="cudagraphs"`, the `"triton.cudagraphs"` '
        "option and `torch._inductor.config.triton.cudagraphs`.",
        why="Both rely on CUDA graphs; TorchNeuron, for one, asks for no CUDA-only "
        "modes.",
        before=(
            "import torch\n" "\n" 'model = torch.compile(model, mode="reduce-overhead")'
        ),
        after='model = torch.compile(\n    model, mode="reduce-overhead" if _DEVICE().type '
        '== "cuda" else "default"\n)  # by hand',
        safety="No fix.",
        valid=(
            (
                "import torch\n"
                "\n"
                'model = torch.compile(model, mode="default", backend="inductor")'
            ),
            EXAMPLE_BINDING
            + (
                "model = torch.compile(\n"
                '    model, mode="reduce-overhead" if _DEVICE().type == "cuda" else "default"\n'
                ")"
            ),
        ),
    ),
    Rule(
        "TP910",
        "cuda-only-guard",
        "`torch.cuda.is_available()` guards CUDA-only code here and is left as it is; "
        "port the body (see its diagnostics) before widening the guard",
        Fix.NONE,
        None,
        what="Reports an `if torch.cuda.is_available():` (or a conditional expression) "
        "whose body uses cuDNN, nvtx, CUDA graphs, CUDA extensions, pynvml, apex, "
        "flash-attn and the like; also such a guard already widened to "
        "`torch.accelerator.is_available()`.",
        why="Widened to every accelerator, the guard would run CUDA-only code on MPS, "
        "XPU, NPU or TPU.",
        before=(
            "import torch\n"
            "\n"
            "if torch.cuda.is_available():\n"
            "    torch.cuda.nvtx.range_push('step')"
        ),
        after="if torch.cuda.is_available():  # kept: the body is CUDA-only",
        safety="No fix.",
        valid=(
            (
                "import torch\n"
                "\n"
                "if torch.accelerator.is_available():\n"
                "    torch.accelerator.synchronize()"
            ),
        ),
    ),
    Rule(
        "TP911",
        "cuda-only-side-effect",
        "CUDA-only call with no portable equivalent, made for its effect; keep it for "
        'CUDA behind `if _DEVICE().type == "cuda":`',
        Fix.SAFE,
        None,
        what="`torch.cuda.set_per_process_memory_fraction`, `set_sync_debug_mode`, "
        "`ipc_collect`, `cudart().cudaProfilerStart()`/`Stop()`, `torch.cuda.profiler."
        "start()`/`stop()`, `torch.cuda.memory._record_memory_history` and "
        "`_dump_snapshot`, called as statements (their result unused), go behind "
        '`if _DEVICE().type == "cuda":`. Other uses are reported.',
        why="Each raises on a machine without CUDA, and no other backend has it; what it "
        "does matters to CUDA alone.",
        before=(
            "import torch\n" "\n" "torch.cuda.set_per_process_memory_fraction(0.5)"
        ),
        after=EXAMPLE_BINDING
        + (
            'if _DEVICE().type == "cuda":\n'
            "    torch.cuda.set_per_process_memory_fraction(0.5)"
        ),
        safety="Safe: unchanged on CUDA, skipped elsewhere.",
        valid=(
            EXAMPLE_BINDING
            + (
                'if _DEVICE().type == "cuda":\n'
                "    torch.cuda.set_per_process_memory_fraction(0.5)"
            ),
            ("import torch\n" "\n" "torch.accelerator.empty_cache()"),
        ),
    ),
    Rule(
        "TP913",
        "cuda-specific-form",
        "CUDA-specific code in a form torchport does not rewrite",
        Fix.NONE,
        None,
        what="Reports `from torch.cuda import *` and the torch.cuda functions it "
        "brings in where they are called bare, a `from torch.cuda... import` taken "
        "when another import fails (`except ImportError:`), CUDA tensor types named by "
        "strings (`x.type(...)` and `torch.set_default_tensor_type(...)` aside: "
        "TP313 handles them), `torch.Tensor.cuda` passed as "
        "a function "
        "(`map(torch.Tensor.cuda, xs)`) and `torch.version.cuda`.",
        why="Each is CUDA-only, and in these forms the name does not say which "
        "torch.cuda API it is, or the code around it cannot be rewritten exactly.",
        before=(
            "import torch\n"
            "\n"
            "xs = [torch.ones(2)]\n"
            "xs = list(map(torch.Tensor.cuda, xs))"
        ),
        after="xs = [x.to(_DEVICE()) for x in xs]  # by hand",
        safety="No fix.",
        valid=(
            (
                "import torch\n"
                "\n"
                "print(torch.__version__)\n"
                "x = x.type(torch.float16)"
            ),
        ),
    ),
)
