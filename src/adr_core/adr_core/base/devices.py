"""The torch device of a run from its config's ``device`` ("auto", "cpu", "cuda", "cuda:1", ...), and the process's
torch settings (``configure_torch``)."""
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


def configure_torch(threads: int, flush_denormals: bool) -> None:
    """The torch settings of a process that trains or rolls out for a run (the trainer, every node of the graph, the
    probe): ``threads`` intra-op threads (0: torch's default) and, with ``flush_denormals``, the CPU's flush-to-zero
    mode (``torch.set_flush_denormal``): floats below 1.2e-38 are computed as 0. Adam's moments of weights whose
    gradient is 0 (dead ReLU units) decay into that range and stay there for tens of thousands of steps; x86 CPUs
    compute each such number ~100x slower (a 128-128 SAC agent's Adam steps took 4x as long:
    results/learner/README.md). Set before the process starts its worker threads: new threads inherit the mode, so
    every process of a run computes alike (the graph = in-process bit for bit)."""
    if threads:
        torch.set_num_threads(threads)
    torch.set_flush_denormal(bool(flush_denormals))
