"""The torch device of a run from its config's ``device`` ("auto", "cpu", "cuda", "cuda:1", ...)."""
from __future__ import annotations

import torch


class DeviceError(ValueError):
    """A device the config names that this machine cannot give."""


def resolve_device(name: str) -> torch.device:
    """``auto``: CUDA when torch sees a device, else the CPU; a CUDA device asked for on a machine without one is a
    ``DeviceError`` naming it."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise DeviceError(f"device {name!r} asked for, but torch sees no CUDA device (use 'cpu' or 'auto')")
    return torch.device(name)
