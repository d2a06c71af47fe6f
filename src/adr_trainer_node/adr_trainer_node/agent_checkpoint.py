"""The trainer's part of a graph checkpoint: the agent, counters and the run identity."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from adr_core.agents import OffPolicyAgent
from adr_core.randomization import RandomizationSpace
from adr_core.training.checkpoint import CheckpointError, save_checkpoint
from adr_core.training.config import TrainConfig
from adr_ros.checkpoints import checkpoint_dir, component_file, load_component

COMPONENT = "agent"


def save_agent(run_dir: Path, iteration: int, agent: OffPolicyAgent, config: TrainConfig, space: RandomizationSpace,
               wall_time: float) -> Path:
    payload = {"iteration": iteration, "agent_steps": agent.transitions_seen, "wall_time": wall_time,
               "config": config.to_dict(), "env_id": config.env_id, "space": space.to_dict(),
               "obs_dim": agent.obs_dim, "act_dim": agent.act_dim, "sampler_kind": config.sampler,
               "agent": agent.state_dict()}
    return save_checkpoint(checkpoint_dir(run_dir) / component_file(COMPONENT, iteration), payload)


def load_agent(run_dir: Path, agent: OffPolicyAgent, config: TrainConfig, space: RandomizationSpace) -> dict[str, Any]:
    """Restore ``agent`` from the run's manifest; returns the payload (iteration, wall_time, ...)."""
    payload = load_component(run_dir, COMPONENT)
    saved = TrainConfig.from_dict(payload["config"])
    differences = config.differences(saved, ignore=TrainConfig.RUNTIME_FIELDS)
    if differences:
        raise CheckpointError(f"{run_dir} was trained with a different config; differing keys: {differences}")
    if payload["space"] != space.to_dict():
        raise CheckpointError(f"{run_dir} was trained on a different randomization space of {config.env_id}")
    try:
        agent.load_state_dict(payload["agent"])
    except (KeyError, ValueError, RuntimeError) as error:
        raise CheckpointError(f"the agent checkpoint of {run_dir} does not fit this run: {error}") from None
    return payload
