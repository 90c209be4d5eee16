"""Tests for scripts/census.py (the stdlib-only CUDA site census)."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from census import census, census_source, run_census  # noqa: E402


def kinds(src):
    return [(s.line, s.kind) for s in census_source(textwrap.dedent(src))]


def test_device_strings_and_fstrings():
    src = """
    import torch
    a = torch.device("cuda")
    b = "cuda:1"
    c = f"cuda:{rank}"
    d = "cudaX"
    e = "cuda:x"
    f = 'cuda:{}'.format(rank)
    g = f"{prefix}cuda:0"
    """
    assert kinds(src) == [
        (3, "device-string"),
        (4, "device-string"),
        (5, "device-fstring"),
        (8, "device-format"),
    ]


def test_docstrings_are_ignored():
    src = '''
    """cuda"""
    def f():
        """cuda:0"""
        return 1
    class C:
        "cuda"
        x = "cuda"
    '''
    assert kinds(src) == [(8, "device-string")]


def test_dict_keys_ignored_but_values_counted():
    src = """
    m = {"cuda": 1, "nccl": 2, "k": "cuda"}
    """
    sites = census_source(textwrap.dedent(src))
    assert [(s.kind, s.col) for s in sites] == [("device-string", 33)]


def test_aliases_resolve_torch_cuda():
    src = """
    import torch as th
    from torch import cuda
    from torch.cuda import amp
    from torch.cuda.amp import GradScaler
    import torch.backends.cudnn as cudnn
    th.cuda.synchronize()
    cuda.empty_cache()
    amp.autocast()
    s = GradScaler()
    cudnn.benchmark = True
    th.backends.cuda.matmul.allow_tf32 = False
    """
    got = kinds(src)
    # Importing torch.cuda names is not a site (it works on every build); uses are.
    assert got == [
        (6, "backend-flag"),
        (7, "torch.cuda"),
        (8, "torch.cuda"),
        (9, "torch.cuda"),
        (10, "torch.cuda"),
        (11, "backend-flag"),
        (12, "backend-flag"),
    ]


def test_chain_reported_once_at_outermost_attribute():
    src = "import torch\nx = torch.cuda.get_device_properties(0).total_memory\n"
    sites = census_source(src)
    assert len(sites) == 1
    assert sites[0].snippet == "torch.cuda.get_device_properties"
    assert (sites[0].line, sites[0].col) == (2, 5)


def test_unrelated_names_are_not_sites():
    src = """
    import torch
    cuda_version = "12.1"
    torch.cuda_thing = 1
    mycuda.is_available()
    print("running on cuda")
    x = torch.device("cpu")
    """
    assert kinds(src) == []


def test_methods_attributes_and_keywords():
    src = """
    import torch
    x = torch.ones(2).cuda()
    y = x.cuda(non_blocking=True)
    if x.is_cuda:
        z = x.pin_memory()
    loader = DataLoader(ds, pin_memory=True)
    loader2 = DataLoader(ds, pin_memory=False)
    """
    assert kinds(src) == [
        (3, ".cuda()"),
        (4, ".cuda()"),
        (5, ".is_cuda"),
        (6, "pin_memory"),
        (7, "dataloader-pin"),
    ]


def test_report_only_kinds():
    src = """
    import os
    import pynvml
    from apex import amp
    import torch.distributed as dist
    from torch.utils.cpp_extension import CUDAExtension
    from torch.profiler import ProfilerActivity
    dist.init_process_group("nccl")
    os.environ["CUDA_VISIBLE_DEVICES"] = "0"
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    ext = CUDAExtension("x", ["x.cu"])
    """
    assert kinds(src) == [
        (3, "vendor-import"),
        (4, "vendor-import"),
        (6, "cuda-extension"),
        (8, "nccl"),
        (9, "env-var"),
        (10, "profiler-cuda"),
        (11, "cuda-extension"),
    ]


def test_autocast_device_type_string():
    src = 'import torch\nwith torch.autocast(device_type="cuda", dtype=torch.float16):\n    pass\n'
    assert kinds(src) == [(2, "device-string")]


def test_files_folders_and_parse_errors(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (tmp_path / "pkg" / "b.py").write_text("x = 1\n")  # no cuda bytes: pre-filtered
    (tmp_path / "pkg" / "bad.py").write_text("def f(:\n  'cuda'\n")
    (tmp_path / "pkg" / "c.txt").write_text("torch.cuda.synchronize()\n")
    sites, errors = run_census([tmp_path])
    assert [(Path(s.path).name, s.line, s.kind) for s in sites] == [
        ("a.py", 2, "torch.cuda")
    ]
    assert [Path(e.path).name for e in errors] == ["bad.py"]
    assert len(census([tmp_path / "pkg" / "a.py"])) == 1


def test_cli_text_and_json(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('import torch\nx = torch.zeros(1, device="cuda:0")\n')
    script = ROOT / "scripts" / "census.py"
    out = subprocess.run(
        [sys.executable, str(script), str(f)], capture_output=True, text=True
    )
    assert out.returncode == 0
    assert out.stdout.strip() == f'{f}:2:27: device-string "cuda:0"'
    out = subprocess.run(
        [sys.executable, str(script), "--json", str(f)], capture_output=True, text=True
    )
    data = json.loads(out.stdout)
    assert data == [
        {
            "path": str(f),
            "line": 2,
            "col": 27,
            "kind": "device-string",
            "snippet": '"cuda:0"',
        }
    ]
    bad = tmp_path / "bad.py"
    bad.write_text("cuda = (\n")
    out = subprocess.run(
        [sys.executable, str(script), str(bad)], capture_output=True, text=True
    )
    assert out.returncode == 2
    assert "bad.py: error:" in out.stderr


@pytest.mark.parametrize(
    "src",
    ["'\\x00cuda'\n", "# -*- coding: latin-1 -*-\nx = 'cuda'\n"],
)
def test_odd_inputs_do_not_crash(tmp_path, src):
    f = tmp_path / "odd.py"
    f.write_bytes(src.encode("latin-1"))
    sites, errors = run_census([f])
    assert len(sites) + len(errors) <= 1


def test_guarded_pin_memory_is_not_a_site_and_dataloader_pin_is_separate():
    src = """
    import torch
    DEVICE = torch.device("cpu")
    a = (x.pin_memory() if _DEVICE().type != "cpu" else x).to(_DEVICE())
    if torch.accelerator.is_available():
        b = y.pin_memory()
        c = torch.empty(3, pin_memory=True)
    else:
        d = y.pin_memory()
    e = torch.utils.data.DataLoader(ds, pin_memory=True)
    f = z.pin_memory() if flag else z
    """
    assert kinds(src) == [
        (9, "pin_memory"),
        (10, "dataloader-pin"),
        (11, "pin_memory"),
    ]


def test_subscript_keys_are_not_device_strings():
    assert kinds('counts = {}\ncounts["cuda"] = 1\nx = "cuda"\n') == [
        (3, "device-string")
    ]


def test_assigning_an_is_cuda_attribute_is_not_a_site():
    assert kinds("self.is_cuda = False\nif x.is_cuda:\n    pass\n") == [(2, ".is_cuda")]


def test_sites_in_forms_no_pass_rewrites():
    src = """
    import os
    import torch
    import torch._inductor.config
    from torch.cuda import *
    from torch.utils.cpp_extension import CUDA_HOME
    try:
        from torch.amp import GradScaler
    except ImportError:
        from torch.cuda.amp import GradScaler
    synchronize()
    y = x.type("torch.cuda.LongTensor")
    z = torch.zeros(2, device=x.get_device())
    w = x.to(x.get_device())
    xs = map(torch.Tensor.cuda, xs)
    m = torch.compile(m, backend="cudagraphs", options={"triton.cudagraphs": True})
    torch._inductor.config.triton.cudagraphs = True
    os.environ.setdefault("CUDA_LAUNCH_BLOCKING", "1")
    run(env={"PYTORCH_CUDA_ALLOC_CONF": "x", "CUBLAS_WORKSPACE_CONFIG": ":4096:8"})
    print(CUDA_HOME, torch.version.cuda)
    print(table(sort_by="self_cuda_memory_usage"), e.cuda_time_total)
    """
    assert kinds(src) == [
        (5, "torch.cuda"),
        (10, "torch.cuda"),
        (11, "torch.cuda"),
        (12, "legacy-type-string"),
        (13, "get-device"),
        (14, "get-device"),
        (15, "torch.cuda"),
        (16, "cuda-graph"),
        (16, "cuda-graph"),
        (17, "cuda-graph"),
        (18, "env-var"),
        (19, "env-var"),
        (19, "env-var"),
        (20, "cuda-extension"),
        (20, "cuda-build"),
        (21, "profiler-cuda"),
        (21, "profiler-cuda"),
    ]


def test_star_import_sites_are_bare_torch_cuda_names_not_defined_here():
    src = """
    from torch.cuda import *
    def synchronize():
        pass
    synchronize()
    empty_cache()
    obj.empty_cache()
    """
    assert kinds(src) == [(2, "torch.cuda"), (6, "torch.cuda")]


def test_plain_torch_cuda_imports_outside_fallbacks_are_not_sites():
    src = """
    from torch.cuda.amp import GradScaler
    try:
        import numpy
    except ImportError:
        numpy = None
    """
    assert kinds(src) == []


def test_a_device_list_naming_another_accelerator_is_no_site():
    src = """
    a = device not in ["cuda", "xpu"]
    b = device in ("mps", "cuda")
    c = device in ["cuda"]
    d = device.type in ["cpu", "cuda"]
    e = ["cuda", "xpu"]
    f = device == "cuda" or device in ["xpu"]
    """
    assert kinds(src) == [
        (4, "device-string"),
        (5, "device-string"),
        (6, "device-string"),
        (7, "device-string"),
    ]


def test_a_parameter_hides_the_import_it_is_named_after():
    src = """
    from torch.utils.cpp_extension import CUDA_HOME

    def detect(CUDA_HOME, so_file):
        return CUDA_HOME + so_file

    print(CUDA_HOME)
    """
    assert kinds(src) == [(7, "cuda-extension")]


def test_binding_a_name_an_import_bound_is_not_a_use_of_it():
    src = """
    from torch.cuda import amp

    class Wrapper:
        amp = False

    with amp.autocast():
        pass
    """
    assert kinds(src) == [(7, "torch.cuda")]


def test_what_follows_a_cuda_test_in_an_and_runs_on_cuda_alone():
    src = """
    import torch
    a = dev.type == "cuda" and torch.cuda.get_device_capability() >= (8, 0)
    b = torch.cuda.is_available() and dev.type == "cuda"
    c = dev.type == "cpu" and torch.cuda.get_device_capability() >= (8, 0)
    d = dev.type == "cuda" or torch.cuda.get_device_capability() >= (8, 0)
    """
    assert kinds(src) == [(4, "torch.cuda"), (5, "torch.cuda"), (6, "torch.cuda")]
