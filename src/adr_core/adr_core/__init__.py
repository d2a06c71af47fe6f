"""Active Domain Randomization core: plain Python, no ROS imports.

For any learner: ``ADRLoop`` (the sampler's side of Algorithm 1) and ``ADRWrapper`` (a gymnasium wrapper that runs
each episode at the loop's setting); stable-baselines3: ``adr_core.integrations.sb3.ADRCallback``. Imported lazily, so
``import adr_core`` stays light.
"""
from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["ADRLoop", "ADRWrapper"]


def __getattr__(name: str) -> Any:
    if name == "ADRLoop":
        from .adr_loop import ADRLoop

        return ADRLoop
    if name == "ADRWrapper":
        from .wrappers import ADRWrapper

        return ADRWrapper
    raise AttributeError(f"module 'adr_core' has no attribute {name!r}")
