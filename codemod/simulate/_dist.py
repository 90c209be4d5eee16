"""``tpccl``: the simulator's collective backend for torch.distributed.

Registered as the default backend of the tpsim device (as NCCL is CUDA's),
so ``dist.get_default_backend_for_device(dev)`` and ``init_process_group()``
without a backend pick it. Each collective copies the tensors to the host,
runs Gloo on the copies and copies the results back into the device tensors
in place. Like NCCL, it refuses two ranks sharing one device.

It is a Python ``ProcessGroup`` subclass because the C++ ``Backend`` has no
Python constructor; torch then uses it as the whole process group, even when
the group was made for CPU tensors too (``"cpu:gloo,tpsim:tpccl"``). So it
serves CPU tensors only in such a group, through Gloo; in a tpccl group it
refuses them with the error a NCCL group gives.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import (
    AllgatherOptions,
    AllreduceCoalescedOptions,
    AllreduceOptions,
    AllToAllOptions,
    BarrierOptions,
    BroadcastOptions,
    GatherOptions,
    ReduceOptions,
    ReduceScatterOptions,
    ScatterOptions,
    _create_work_from_future,
)

NAME = "tpccl"
DEVICE = "tpsim"


def _done(result):
    future = torch.futures.Future()
    future.set_result(result)
    return _create_work_from_future(future)


def _host(t: torch.Tensor) -> torch.Tensor:
    return t if t.device.type == "cpu" else t.cpu().contiguous()


def _back(devices, hosts) -> None:
    for device_tensor, host in zip(devices, hosts):
        if device_tensor is not host:
            device_tensor.copy_(host)


class ProcessGroupSim(dist.ProcessGroup):
    def __init__(self, store, rank: int, size: int, timeout):
        super().__init__(rank, size)
        self._gloo = dist.ProcessGroupGloo(
            dist.PrefixStore(f"{NAME}/", store), rank, size, timeout
        )
        self._rank, self._size = rank, size
        self._checked = False
        self._serves_cpu: bool | None = None
        # init_process_group(device_id=...) and other torch code look the
        # device's backend up; collectives still go through the methods here.
        self._register_backend(
            torch.device(DEVICE), dist.ProcessGroup.BackendType.CUSTOM, self._gloo
        )

    def getBackendName(self) -> str:
        return NAME

    def _cpu_allowed(self) -> bool:
        if self._serves_cpu is None:
            try:
                config = dist.distributed_c10d._world.pg_backend_config.get(self)
            except AttributeError:  # another torch: assume a tpccl group
                config = None
            self._serves_cpu = "cpu:" in str(config or "")
        return self._serves_cpu

    def _check(self, tensors) -> None:
        """CPU tensors only where the group serves the CPU; then, once, every
        rank must use its own device, as NCCL insists."""
        if not self._cpu_allowed():
            for t in tensors:
                if t.device.type != DEVICE:
                    raise RuntimeError(
                        f"No backend type associated with device type "
                        f"{t.device.type} ({NAME}, like NCCL, serves {DEVICE} "
                        f"tensors only: a .to(DEVICE) is missing, or the group "
                        f"needs backend='cpu:gloo,{DEVICE}:{NAME}')"
                    )
        devices = {t.device for t in tensors if t.device.type == DEVICE}
        if self._checked or not devices:
            return
        self._checked = True
        mine = torch.tensor([next(iter(devices)).index])
        everyone = [torch.empty_like(mine) for _ in range(self._size)]
        self._gloo.allgather([everyone], [mine]).wait()
        seen: dict[int, int] = {}
        for rank, index in enumerate(int(t) for t in everyone):
            if index in seen:
                raise RuntimeError(
                    f"{NAME}: ranks {seen[index]} and {rank} both use {DEVICE}:"
                    f"{index}; like NCCL, each rank needs its own device "
                    "(torch.accelerator.set_device_index(local_rank))"
                )
            seen[index] = rank

    def allreduce(self, tensors, opts=AllreduceOptions()):
        self._check(tensors)
        hosts = [_host(t) for t in tensors]
        average = opts.reduceOp == dist.ReduceOp.AVG  # Gloo has no AVG
        if average:
            opts = AllreduceOptions()
            opts.reduceOp = dist.ReduceOp.SUM
        self._gloo.allreduce(hosts, opts).wait()
        if average:
            for h in hosts:
                h.div_(self._size)
        _back(tensors, hosts)
        return _done(tensors)

    def reduce(self, tensors, opts=ReduceOptions()):
        self._check(tensors)
        hosts = [_host(t) for t in tensors]
        average = opts.reduceOp == dist.ReduceOp.AVG  # Gloo has no AVG
        if average:
            root = opts.rootRank
            opts = ReduceOptions()
            opts.reduceOp, opts.rootRank = dist.ReduceOp.SUM, root
        self._gloo.reduce(hosts, opts).wait()
        if self._rank == opts.rootRank:  # elsewhere the result is undefined
            if average:
                for h in hosts:
                    h.div_(self._size)
            _back(tensors, hosts)
        return _done(tensors)

    def alltoall_base(
        self, output, input, output_split_sizes, input_split_sizes, opts=None
    ):
        self._check([output, input])
        host_out, host_in = _host(output), _host(input)
        options = AllToAllOptions() if opts is None else opts
        self._gloo.alltoall_base(
            host_out, host_in, output_split_sizes, input_split_sizes, options
        ).wait()
        _back([output], [host_out])
        return _done([output])

    def alltoall(self, output_tensors, input_tensors, opts=None):
        self._check(list(output_tensors) + list(input_tensors))
        # Gloo has no list form: one all_to_all_single of the concatenation.
        flat_in = torch.cat([_host(t).reshape(-1) for t in input_tensors])
        flat_out = torch.empty(
            sum(t.numel() for t in output_tensors), dtype=flat_in.dtype
        )
        options = AllToAllOptions() if opts is None else opts
        self._gloo.alltoall_base(
            flat_out,
            flat_in,
            [t.numel() for t in output_tensors],
            [t.numel() for t in input_tensors],
            options,
        ).wait()
        for t, part in zip(
            output_tensors, flat_out.split([t.numel() for t in output_tensors])
        ):
            t.copy_(part.view_as(t))
        return _done(output_tensors)

    def allreduce_coalesced(self, tensors, opts=AllreduceCoalescedOptions()):
        single = AllreduceOptions()
        single.reduceOp = opts.reduceOp
        for t in tensors:
            self.allreduce([t], single)
        return _done(tensors)

    def broadcast(self, tensors, opts=BroadcastOptions()):
        self._check(tensors)
        hosts = [_host(t) for t in tensors]
        self._gloo.broadcast(hosts, opts).wait()
        _back(tensors, hosts)
        return _done(tensors)

    def allgather(self, output_tensors, input_tensors, opts=AllgatherOptions()):
        self._check(list(input_tensors) + [t for ts in output_tensors for t in ts])
        hosts_in = [_host(t) for t in input_tensors]
        hosts_out = [[_host(t) for t in outs] for outs in output_tensors]
        self._gloo.allgather(hosts_out, hosts_in, opts).wait()
        for outs, hosts in zip(output_tensors, hosts_out):
            _back(outs, hosts)
        return _done(output_tensors)

    def all_gather_single(self, output, input, opts=AllgatherOptions()):
        self.allgather([list(output.chunk(self._size))], [input], opts)
        return _done([output])

    def all_gather_single_coalesced(self, outputs, inputs, opts=AllgatherOptions()):
        for output, input in zip(outputs, inputs):
            self.all_gather_single(output, input, opts)
        return _done(outputs)

    def reduce_scatter_single(self, output, input, opts=ReduceScatterOptions()):
        self._check([output, input])
        # A reduction of everything, keeping our chunk: simple, and exact.
        reduced = input.clone()
        allreduce = AllreduceOptions()
        allreduce.reduceOp = opts.reduceOp
        self.allreduce([reduced], allreduce)
        output.copy_(reduced.chunk(self._size)[self._rank].view_as(output))
        return _done([output])

    def reduce_scatter(self, outputs, input_lists, opts=ReduceScatterOptions()):
        for output, inputs in zip(outputs, input_lists):
            flat = torch.stack([t.reshape(output.shape) for t in inputs])
            self.reduce_scatter_single(output, flat, opts)
        return _done(outputs)

    def barrier(self, opts=BarrierOptions()):
        self._gloo.barrier(opts).wait()
        return _done([])

    def send(self, tensors, dst: int, tag: int = 0):
        self._check(tensors)
        self._gloo.send([_host(t) for t in tensors], dst, tag).wait()
        return _done(tensors)

    def recv(self, tensors, src: int, tag: int = 0):
        self._check(tensors)
        hosts = [_host(t) for t in tensors]
        self._gloo.recv(hosts, src, tag).wait()
        _back(tensors, hosts)
        return _done(tensors)

    def gather(self, output_tensors, input_tensors, opts=GatherOptions()):
        self._check(list(input_tensors) + [t for ts in output_tensors for t in ts])
        hosts_in = [_host(t) for t in input_tensors]
        hosts_out = [[_host(t) for t in outs] for outs in output_tensors]
        self._gloo.gather(hosts_out, hosts_in, opts).wait()
        for outs, hosts in zip(output_tensors, hosts_out):
            _back(outs, hosts)
        return _done(output_tensors)

    def scatter(self, output_tensors, input_tensors, opts=ScatterOptions()):
        self._check(list(output_tensors) + [t for ts in input_tensors for t in ts])
        hosts_out = [_host(t) for t in output_tensors]
        hosts_in = [[_host(t) for t in ins] for ins in input_tensors]
        self._gloo.scatter(hosts_out, hosts_in, opts).wait()
        _back(output_tensors, hosts_out)
        return _done(output_tensors)


def _create(store, rank, size, timeout):
    return ProcessGroupSim(store, rank, size, timeout)


def register() -> None:
    if not dist.is_available() or NAME in dist.Backend.backend_list:
        return
    dist.Backend.register_backend(NAME, _create, devices=[DEVICE])
