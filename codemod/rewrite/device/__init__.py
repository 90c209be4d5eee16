"""The device binding, in one place: its plan (which name the passes emit), its text
(the statement by target torch), and its placement (where it and ``import torch``
go). A module that needs the device gets an accessor right after its imports (a
leading underscore: ``from module import *`` never exports it)::

    @functools.cache
    def _DEVICE():
        if torch.accelerator.device_count() > 0:
            return torch.accelerator.current_accelerator()
        return torch.device("cpu")
"""
