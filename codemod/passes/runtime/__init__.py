"""The runtime pass (TP3xx): the ``torch.cuda`` runtime API made portable.

The catalogue's rows of this pass (``codemod.catalog.runtime``) map each
``torch.cuda`` name to its portable form: the rule it belongs to (the rule carries
the fix kind and the torch release the fix needs; a row carries its own where the
fix of that name needs one), the replacement callee, the rewrite applied (a shape of
``shapes``), and, where the portable call raises on a machine without an accelerator
while the CUDA call did not (or where the CUDA call crashed there too), the value the
call takes on the CPU. Such calls are emitted behind ``DEVICE().type != "cpu"``
(``cpu_guard``): inline as a conditional expression, or as a one-line ``if`` when the
call is a statement of its own. Names with no portable equivalent are reported with
advice.

The modules: ``dispatch`` (the pass: what it visits, and each site sent to its row's
rewrite), ``shapes`` (the rewrites, registered by name), ``availability`` (whether an
``is_available()`` test is widened or kept), ``bindings`` (which receivers are CUDA
events and streams), ``cpu_guard`` (the guard emitted around a call) and ``tables``
(the catalogue as the pass reads it).

Every choice was checked on CPU PyTorch 2.13:
- ``torch.get_device_module(DEVICE())`` is ``torch.cpu`` there, which has
  ``synchronize``, ``Stream``, ``current_stream`` and ``stream`` (no-ops), but no
  ``manual_seed*``, rng state or ``Event(enable_timing=...)``;
- ``torch.accelerator.*`` (device index, memory, streams) raises there;
- ``torch.Event(DEVICE()).record()`` and ``torch.Stream(DEVICE()).wait_stream`` raise
  there, so streams and events use the device module (``torch.cpu.Event()`` for the
  CPU: recording and waiting are no-ops; it cannot time, see TP307).
"""

from codemod.passes.runtime.dispatch import CudaRuntime

__all__ = ["CudaRuntime"]
