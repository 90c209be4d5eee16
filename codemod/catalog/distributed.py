"""Distributed: the NCCL backend, DDP device ids, spawn counts, DataParallel."""

from __future__ import annotations

from typing import List

from codemod.catalog.rows import Row

ROWS: List[Row] = [
    Row(
        ('"nccl" as a backend',),
        "TP501",
        "distributed",
        "{torch}.distributed.get_default_backend_for_device({device})",
        kind="string",
        trigger="nccl",
    ),
    Row(
        ('"cuda:nccl,cpu:gloo" as a backend',),
        "TP501",
        "distributed",
        # the pair that takes the place of "cuda:nccl"
        'f"{{device}.type}:{{torch}.distributed.get_default_backend_for_device('
        '{device})}"',
        kind="string",
        trigger="nccl",
    ),
    Row(
        (
            "torch.distributed.is_nccl_available",
            "torch.distributed.distributed_c10d.is_nccl_available",
        ),
        "TP502",
        "distributed",
        trigger="nccl",
    ),
    Row(('backend == "nccl"',), "TP502", "distributed", kind="form", trigger="nccl"),
    Row(
        (
            "torch.distributed.Backend.NCCL",
            "torch.distributed.distributed_c10d.Backend.NCCL",
        ),
        "TP503",
        "distributed",
        trigger="NCCL",
    ),
    Row(('"nccl"',), "TP503", "distributed", kind="string", trigger="nccl"),
    Row(
        ("device_ids=", "output_device="),
        "TP504",
        "distributed",
        cpu="None",
        kind="keyword",
    ),
    Row(
        ("spawn(nprocs=torch.cuda.device_count())",),
        "TP505",
        "distributed",
        "max({count}, 1)",
        kind="form",
    ),
    # Collectives of CPU and CUDA tensors only; reported in a module that uses CUDA.
    Row(
        ('"gloo" as a backend',), "TP507", "distributed", kind="string", trigger="gloo"
    ),
    # CUDA's scatter; reported where no CUDA test keeps it to CUDA (TP301 keeps it).
    Row(
        (
            "torch.nn.DataParallel",
            "torch.nn.parallel.DataParallel",
            "torch.nn.parallel.data_parallel.DataParallel",
        ),
        "TP506",
        "distributed",
        rewrite="report",
        trigger=r"\bDataParallel\b",
    ),
    Row(
        (
            "torch.nn.parallel.data_parallel",
            "torch.nn.parallel.data_parallel.data_parallel",
        ),
        "TP506",
        "distributed",
        rewrite="report",
        trigger=r"\bdata_parallel\b",
    ),
]
