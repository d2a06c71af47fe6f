"""Active Domain Randomization core: plain Python, no ROS imports.

For any learner: ``ADRLoop`` (the sampler's side of Algorithm 1) and ``ADRWrapper`` (a gymnasium wrapper that runs
each episode at the loop's setting); stable-baselines3: ``adr_core.integrations.sb3.ADRCallback``. ``import adr_core``
registers the four envs with gymnasium (``gym.make("adr/LunarLander-v0")``; each env's simulator is imported only when
it is made); ``ADRLoop`` and ``ADRWrapper`` are imported lazily, so torch is not loaded by the import.
"""
from __future__ import annotations

from typing import Any

from . import envs as _envs  # noqa: F401  (registers adr/<Name>-v0 with gymnasium)

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
