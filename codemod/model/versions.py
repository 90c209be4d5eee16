"""The torch releases that brought the portable APIs torchport writes, checked in the
wheels of each release (tests/test_signatures.py holds the installed torch to them).
A rule's fix, or a catalogue row's, needs the release named here."""

from __future__ import annotations

from codemod.model.rule import TorchVersion

OOM_ERROR_TORCH: TorchVersion = (2, 5)  # torch.OutOfMemoryError
ACCELERATOR_TORCH: TorchVersion = (2, 6)  # torch.accelerator
DIST_TORCH: TorchVersion = (2, 6)  # torch.distributed.get_default_backend_for_device
STREAM_CONTEXT_TORCH: TorchVersion = (2, 7)  # `with stream:` (torch.Stream)
DEVICE_INDEX_TORCH: TorchVersion = (2, 8)  # torch.accelerator.device_index
MEMORY_TORCH: TorchVersion = (2, 9)  # torch.accelerator memory statistics
MEMORY_INFO_TORCH: TorchVersion = (2, 10)  # torch.accelerator.get_memory_info
