"""Trained policies from run directories: in-process runs (``checkpoints/latest.pt``, ``iter_<n>.pt``) and node-graph
runs (``checkpoints/latest.json`` naming ``agent-<k>.pt``). Only the actor weights are kept.

Every file is read with ``torch.load(weights_only=True)`` (``adr_core.base.checkpoint.load_checkpoint``); a file
that is missing, corrupt, foreign or whose actor does not fit its environment raises ``CheckpointError`` naming it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..agents.networks import ActorPolicy, ActorStateError, actor_from_state_dict
from ..base.checkpoint import CheckpointError, load_checkpoint
from ..randomization import RandomizationError, RandomizationSpace
from ..run_dir import CHECKPOINTS, IDENTITY_KEYS, IN_PROCESS_LATEST, MANIFEST, resolve_checkpoint, snapshot_checkpoints

__all__ = ["CHECKPOINTS", "GRAPH_MANIFEST", "IN_PROCESS_LATEST", "TrainedPolicy", "load_policy", "read_policy_file",
           "resolve_checkpoint", "snapshot_checkpoints"]

GRAPH_MANIFEST = MANIFEST
_REQUIRED = (*IDENTITY_KEYS, "agent")


@dataclass(frozen=True)
class TrainedPolicy:
    """The actor of one checkpoint, with what is needed to evaluate it."""

    path: Path
    env_id: str
    space: RandomizationSpace
    obs_dim: int
    act_dim: int
    iteration: int
    agent_steps: int
    config: dict[str, Any] = field(repr=False)
    actor_weights: dict[str, torch.Tensor] = field(repr=False)

    def policy(self) -> ActorPolicy:
        return ActorPolicy.from_state_dict(self.actor_weights)

    def numpy_weights(self) -> dict[str, np.ndarray]:
        """Plain arrays (cheap to send to worker processes)."""
        return {name: tensor.numpy() for name, tensor in self.actor_weights.items()}

    @property
    def max_episode_steps(self) -> int | None:
        return self.config.get("max_episode_steps")

    @property
    def run_space(self) -> RandomizationSpace | None:
        """The space the run trained in when its config named one (``space:``), else None (the packaged one).
        The checkpoint's copy is used, so the policy evaluates the same way wherever it is moved."""
        return self.space if self.config.get("space") else None


def _import_env_modules(payload: dict[str, Any], path: Path) -> None:
    """A run of an env registered by its own module (config ``env_modules``): import it, so its id is known, if the
    user allowed it (``adr_core.envs.import_file_env_modules``: a checkpoint never makes a tool import code)."""
    from ..envs import import_file_env_modules

    config = payload.get("config")
    modules = config.get("env_modules") if isinstance(config, dict) else None
    if modules is not None and not isinstance(modules, (list, tuple)):
        raise CheckpointError(f"{path}: config.env_modules must be a list of module names")
    try:
        import_file_env_modules(modules, payload.get("env_id"), f"{path}")
    except RandomizationError as error:
        raise CheckpointError(str(error)) from None


def load_policy(path: str | Path) -> TrainedPolicy:
    """A run directory, a ``checkpoints/`` folder, a ``latest.json`` manifest or a checkpoint ``.pt`` file."""
    return read_policy_file(resolve_checkpoint(path))


def read_policy_file(path: str | Path) -> TrainedPolicy:
    path = Path(path)
    payload = load_checkpoint(path, map_location="cpu")
    _import_env_modules(payload, path)
    missing = [key for key in _REQUIRED if key not in payload]
    agent = payload.get("agent")
    if missing or not isinstance(agent, dict) or "actor" not in agent:
        raise CheckpointError(f"{path} holds no agent policy (missing {missing or ['agent.actor']}); "
                              f"is it a sampler or discriminator checkpoint?")
    try:
        space = RandomizationSpace.from_dict(payload["space"])
        actor = actor_from_state_dict(agent["actor"])
    except (RandomizationError, ActorStateError) as error:
        raise CheckpointError(f"{path}: {error}") from None
    dims = (actor.obs_dim, actor.act_dim)
    if dims != (int(payload["obs_dim"]), int(payload["act_dim"])):
        raise CheckpointError(f"{path}: the actor maps {dims[0]} -> {dims[1]} but the checkpoint says "
                              f"obs_dim {payload['obs_dim']}, act_dim {payload['act_dim']}")
    weights = {name: tensor.detach().to(torch.float32).clone() for name, tensor in actor.state_dict().items()}
    return TrainedPolicy(path=path.resolve(), env_id=str(payload["env_id"]), space=space, obs_dim=dims[0],
                         act_dim=dims[1],
                         iteration=int(payload.get("iteration", -1)), agent_steps=int(payload.get("agent_steps", -1)),
                         config=dict(payload.get("config") or {}), actor_weights=weights)
