"""A simulator that is an optional extra of the pip install: its absence is one line naming the extra to install."""
from __future__ import annotations

import importlib
from types import ModuleType

EXTRA_OF = {"mujoco": "mujoco", "pybullet": "pybullet", "Box2D": "box2d"}


class MissingSimulator(ModuleNotFoundError):
    """The env's simulator is not installed."""


def missing(module: str, env_ids: str, what: str | None = None) -> MissingSimulator:
    """``what``: the missing part in words where it is not ``module`` itself (e.g. gymnasium's Box2D envs need pygame
    too)."""
    extra = EXTRA_OF[module]
    return MissingSimulator(f"{env_ids} needs {what or module}, which is not installed: pip install "
                            f"'adr_core[{extra}]' (or the project's make setup)", name=module)


def require(module: str, env_ids: str) -> ModuleType:
    """``import module``, or ``MissingSimulator`` naming the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name != module:  # a dependency of the simulator itself: its own message is the clearer one
            raise
        raise missing(module, env_ids) from None
