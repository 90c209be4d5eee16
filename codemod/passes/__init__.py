"""The transform passes, in the order they run.

Each pass is one module holding one ``Pass`` subclass; the rules it implements are
data in ``codemod.rules.<family>`` (its ``RULES``).
Order matters where passes meet: device strings run first, so that
``"cuda" if torch.cuda.is_available() else "cpu"`` is seen whole before the
runtime pass rewrites ``torch.cuda.is_available()`` on its own.
"""

from codemod.passes.amp import Amp
from codemod.passes.cuda_queries import CudaQueries
from codemod.passes.runtime import CudaRuntime
from codemod.passes.device_strings import DeviceStrings
from codemod.passes.tensor_methods import TensorMethods
from codemod.passes.tensor_types import TensorTypes
from codemod.passes.distributed import Distributed
from codemod.passes.backend_flags import BackendFlags
from codemod.passes.cuda_only import CudaOnly

PASSES = (
    DeviceStrings,
    TensorMethods,
    Amp,
    CudaQueries,
    CudaRuntime,
    TensorTypes,
    Distributed,
    BackendFlags,
    CudaOnly,
)
