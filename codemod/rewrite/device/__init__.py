"""The device binding, in one place: its plan (which name the passes emit), its text
(the statement by target torch), and its placement (where it and ``import torch``
go). A module that needs the device gets one binding right after its imports::

    DEVICE = (
        torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")
    )
"""
