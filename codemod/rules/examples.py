"""What the documented examples share."""

# How a documented example's rewrite starts when it needs the device binding: each
# example is a whole program, rewritten by the tests (tests/test_docs.py).
EXAMPLE_BINDING = (
    "import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator("
    'check_available=True) or torch.device("cpu")\n)\n\n'
)
