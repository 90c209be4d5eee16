"""Self-checks of what a port typically gets wrong or right: the simulator
refuses what a GPU refuses (0-dim CPU tensors outside elementwise ops, a
side stream's results used before a wait) and accepts what TorchTPU's module
offers (see selfcheck.py)."""

from __future__ import annotations

import torch
import torch.nn as nn

from ._selfcheck_base import DEV, SAME, check, raises


@check
def check_zero_dim():
    x = torch.ones(3, device=DEV)
    # A scalar to elementwise ops, as CUDA's TensorIterator takes it ...
    assert (x + torch.tensor(2.0)).device == x.device
    assert torch.where(x > 0, x, torch.tensor(0.0)).device == x.device
    assert x.masked_fill(x > 0, torch.tensor(2.0)).tolist() == [2.0] * 3
    z = torch.zeros(3, device=DEV)
    z[torch.tensor([0])] = torch.tensor(5.0)  # index_put_ of a CPU scalar
    assert z.tolist() == [5.0, 0, 0]
    # ... but refused where CUDA checks every tensor's device.
    cpu = f"{SAME}, tpsim:0 and cpu!"
    raises(RuntimeError, cpu, x.index_select, 0, torch.tensor(0))
    raises(RuntimeError, SAME, nn.Embedding(4, 2).to(DEV), torch.tensor(1))
    raises(RuntimeError, SAME, torch.gather, x, 0, torch.tensor(0))


@check
def check_stream_order():
    main = torch.accelerator.current_stream()
    side = torch.Stream(DEV)
    x = torch.ones(4, device=DEV)
    side.wait_stream(main)
    with side:
        y = x * 2
    raises(RuntimeError, "tpsim stream check", y.sum)  # used before a wait
    raises(RuntimeError, "tpsim stream check", y.cpu)
    main.wait_stream(side)
    assert y.sum().item() == 8
    fresh = torch.ones(4, device=DEV)  # written on main, unseen by side
    with side:
        raises(RuntimeError, "tpsim stream check", torch.add, x, fresh)
        z = x + 1  # fine: x was written before side waited for main
    event = side.record_event()
    main.wait_event(event)
    assert z.tolist() == [2.0] * 4
    with side:
        w = z * 3
    side.synchronize()  # the host waited for side: every stream sees w now
    assert w.sum().item() == 24
    with side:
        v = w + 1
    while not side.query():  # polled until done: ordered too
        pass
    assert v.sum().item() == 28


@check
def check_tpu_module():
    """What TorchTPU's torch.tpu has works on torch.tpsim."""
    module = torch.tpsim
    module.set_device(1)
    assert module.current_device() == 1
    assert torch.empty(1, device=DEV).device.index == 1
    module.manual_seed(7)  # the current device only
    one = torch.randn(3, device=DEV).cpu()
    module.set_device(0)
    module.manual_seed(8)
    zero = torch.randn(3, device=DEV).cpu()
    module.set_device(1)
    module.manual_seed(7)
    assert torch.randn(3, device=DEV).cpu().equal(one) and not zero.equal(one)
    module.set_device(0)
    side = module.Stream()
    with module.stream(side):
        assert module.current_stream() == side
    assert module.current_stream() == module.default_stream() != side
    module.set_stream(side)
    assert torch.accelerator.current_stream() == side
    module.set_stream(module.default_stream())
    event = module.Event(enable_timing=True)
    event.record()
    module.synchronize()
    assert event.query() and module.get_device_name().startswith("tpsim")
    assert module.get_device_properties(0).total_memory > 0
