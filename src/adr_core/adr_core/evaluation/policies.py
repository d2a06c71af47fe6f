"""Trained policies from run directories: in-process runs (``checkpoints/latest.pt``, ``iter_<n>.pt``) and node-graph
runs (``checkpoints/latest.json`` naming ``agent-<k>.pt``). Only the actor weights are kept.

Every file is read with ``torch.load(weights_only=True)`` (``adr_core.training.checkpoint.load_checkpoint``); a file
that is missing, corrupt, foreign or whose actor does not fit its environment raises ``CheckpointError`` naming it.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..agents.networks import ActorPolicy, ActorStateError, actor_from_state_dict
from ..randomization import RandomizationError, RandomizationSpace
from ..training.checkpoint import CheckpointError, load_checkpoint

CHECKPOINTS = "checkpoints"
IN_PROCESS_LATEST = "latest.pt"
GRAPH_MANIFEST = "latest.json"
_SNAPSHOT = re.compile(r"^(?:iter_(\d+)|agent-(\d+))\.pt$")
_REQUIRED = ("env_id", "space", "obs_dim", "act_dim", "agent")


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


def load_policy(path: str | Path) -> TrainedPolicy:
    """A run directory, a ``checkpoints/`` folder, a ``latest.json`` manifest or a checkpoint ``.pt`` file."""
    return read_policy_file(resolve_checkpoint(path))


def resolve_checkpoint(path: str | Path) -> Path:
    """The checkpoint file ``path`` designates (a run dir: its in-process ``latest.pt``, else its manifest's agent)."""
    path = Path(path)
    if path.is_file():
        return _agent_file_of_manifest(path) if path.suffix == ".json" else path
    if not path.is_dir():
        raise CheckpointError(f"no run directory or checkpoint at {path}")
    holds_checkpoints = (path / IN_PROCESS_LATEST).is_file() or (path / GRAPH_MANIFEST).is_file()
    directory = path if holds_checkpoints else path / CHECKPOINTS
    if (directory / IN_PROCESS_LATEST).is_file():
        return directory / IN_PROCESS_LATEST
    if (directory / GRAPH_MANIFEST).is_file():
        return _agent_file_of_manifest(directory / GRAPH_MANIFEST)
    raise CheckpointError(f"{path} holds no checkpoint: expected {CHECKPOINTS}/{IN_PROCESS_LATEST} (adr-train) or "
                          f"{CHECKPOINTS}/{GRAPH_MANIFEST} (node graph)")


def read_policy_file(path: str | Path) -> TrainedPolicy:
    path = Path(path)
    payload = load_checkpoint(path, map_location="cpu")
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


def snapshot_checkpoints(run_dir: str | Path) -> list[Path]:
    """Policy snapshots kept during training (``iter_<n>.pt`` or ``agent-<k>.pt``), oldest first."""
    directory = Path(run_dir) / CHECKPOINTS
    if not directory.is_dir():
        return []
    found = [(int(m.group(1) or m.group(2)), p) for p in directory.iterdir() if (m := _SNAPSHOT.match(p.name))]
    return [p for _, p in sorted(found)]


def _agent_file_of_manifest(manifest: Path) -> Path:
    try:
        data = json.loads(manifest.read_text())
        name = data["files"]["agent"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise CheckpointError(f"{manifest} is not a checkpoint manifest naming an agent file ({error})") from None
    if Path(name).name != name:
        raise CheckpointError(f"{manifest} names {name!r}; expected a file name inside {manifest.parent}")
    return manifest.parent / name
