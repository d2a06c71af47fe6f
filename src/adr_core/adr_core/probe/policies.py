"""Frozen policies for the probe: a run's checkpoint (run directory, checkpoints/ folder, latest.json or .pt) or a
``module:callable`` that maps one observation to one action.

Everything is checked before any rollout: the import, the checkpoint's env and randomization space, and one call on a
real observation of the env (an action of the env's shape, finite). A failure raises ``PolicyLoadError`` naming the
cause.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from ..base.checkpoint import CheckpointError
from ..randomization import RandomizationSpace
from ..rollout import Policy


class PolicyLoadError(ValueError):
    """A frozen policy that cannot be used; the message says why."""


@dataclass(frozen=True)
class FrozenPolicy:
    spec: str  # what the user gave
    policy: Policy
    callable_path: str = ""  # module:callable (worker processes import it again)
    weights: dict[str, np.ndarray] | None = field(default=None, repr=False)  # a checkpoint's actor

    @property
    def kind(self) -> str:
        return "callable" if self.callable_path else "checkpoint"


def is_callable_path(spec: str) -> bool:
    return ":" in spec and not Path(spec).exists()


def import_callable(path: str) -> Any:
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise PolicyLoadError(f"policy {path!r}: expected 'package.module:callable'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise PolicyLoadError(f"policy {path!r}: module {module_name!r} does not import ({error})") from None
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise PolicyLoadError(f"policy {path!r}: {module_name} has no attribute {attribute!r}")
        target = getattr(target, part)
    if not callable(target):
        raise PolicyLoadError(f"policy {path!r}: {attribute} is a {type(target).__name__}, not a callable")
    return target


def load_frozen_policy(spec: str, env_id: str, space: RandomizationSpace) -> FrozenPolicy:
    """The policy ``spec`` names, checked against ``env_id`` and its randomization ``space``."""
    if is_callable_path(spec):
        return FrozenPolicy(spec, import_callable(spec), callable_path=spec)
    from ..evaluation.policies import load_policy

    try:
        trained = load_policy(spec)
    except CheckpointError as error:
        raise PolicyLoadError(f"policy {spec!r}: {error}") from None
    if trained.env_id != env_id:
        raise PolicyLoadError(f"policy {spec!r} was trained on {trained.env_id}, the probe runs {env_id}")
    if trained.space.to_dict() != space.to_dict():
        raise PolicyLoadError(f"policy {spec!r} was trained on another randomization space of {env_id} "
                              f"(dimensions {trained.space.names}); the probe uses {space.names}")
    return FrozenPolicy(spec, trained.policy(), weights=trained.numpy_weights())


def check_policy(frozen: FrozenPolicy, env: gym.Env, seed: int = 0) -> None:
    """One call on a real observation: the action must have the env's action shape and be finite."""
    obs, _ = env.reset(seed=seed)
    try:
        action = np.asarray(frozen.policy(np.asarray(obs, dtype=np.float32)), dtype=np.float64)
    except Exception as error:  # noqa: BLE001 - any failure of user code is reported, with its type
        raise PolicyLoadError(f"policy {frozen.spec!r} failed on an observation of shape {np.shape(obs)}: "
                              f"{type(error).__name__}: {error}") from None
    expected = env.action_space.shape
    if action.shape != expected:
        raise PolicyLoadError(f"policy {frozen.spec!r} returned an action of shape {action.shape}; the env's action "
                              f"space has shape {expected}")
    if not np.isfinite(action).all():
        raise PolicyLoadError(f"policy {frozen.spec!r} returned a non-finite action {action.tolist()}")
