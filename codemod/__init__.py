"""torchport: rewrite CUDA-specific PyTorch code into device-portable code."""

__version__ = "0.2.0"
