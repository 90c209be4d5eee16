"""The runtime pass (TP3xx): the ``torch.cuda`` runtime API made portable.

The catalogue's rows of this pass (``codemod.catalog.runtime``) map each
``torch.cuda`` name to its portable form: the rule it belongs to (the rule carries
the fix kind and the torch release the fix needs; a row carries its own where the
fix of that name needs one), the replacement callee, the rewrite applied (a shape of
``shapes``), and, where the portable call raises on a machine without an accelerator
while the CUDA call did not (or where the CUDA call crashed there too), the value the
call takes on the CPU. Such calls are emitted behind ``_DEVICE().type != "cpu"``
(``cpu_guard``): inline as a conditional expression, or as a one-line ``if`` when the
call is a statement of its own. Names with no portable equivalent are reported with
advice.

The modules: ``dispatch`` (the pass: what it visits, and each site sent to its row's
rewrite), ``shapes`` (the rewrites, registered by name), ``availability`` (whether an
``is_available()`` test is widened or kept), ``bindings`` (which receivers are CUDA
events and streams) with ``containers`` (lists and tuples of them), ``cpu_guard`` (the guard emitted around a call) and ``tables``
(the catalogue as the pass reads it).

Every choice was checked on CPU PyTorch 2.13 and on the simulated accelerator
(codemod/simulate, whose device module has only what torch requires of one):
- ``torch.accelerator.*`` (device index, synchronize, memory, streams) raises on the
  CPU, as do ``torch.Stream(cpu).wait_stream`` and ``torch.Event(cpu).record()``;
  so streams and events are torch's own (``torch.Stream``, ``torch.Event``,
  ``torch.accelerator.current_stream()``: what every accelerator implements) behind
  the guard, with torch.cpu's no-op stand-ins on the CPU (``torch.cpu.Stream()``,
  ``torch.cpu.Event()``: recording and waiting are no-ops; it cannot time, see TP307);
- ``torch.get_device_module(_DEVICE())`` is ``torch.cpu`` on the CPU, which has no
  ``manual_seed*`` or rng state; another backend's module need not have them either.
"""

from codemod.passes.runtime.dispatch import CudaRuntime

__all__ = ["CudaRuntime"]
