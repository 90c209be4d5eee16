"""What the documented examples share."""

# How a documented example's rewrite starts when it needs the device: each example is
# a whole program, rewritten by the tests (tests/test_docs.py).
EXAMPLE_ACCESSOR = (
    "@functools.cache\ndef _DEVICE():\n"
    '    """The accelerator found on first use, else the CPU."""\n'
    "    if torch.accelerator.device_count() > 0:\n"
    "        return torch.accelerator.current_accelerator()\n"
    '    return torch.device("cpu")\n\n\n'
)
EXAMPLE_BINDING = "import functools\n\nimport torch\n\n\n" + EXAMPLE_ACCESSOR
