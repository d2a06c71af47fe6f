"""The trainer's part of a graph checkpoint: the agent, counters and the run identity."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from adr_core.agents import OffPolicyAgent
from adr_core.base.checkpoint import CheckpointError, save_checkpoint
from adr_core.randomization import RandomizationSpace
from adr_core.run_dir import check_config, check_identity, checkpoint_dir, component_file, load_component, run_identity
from adr_core.training.config import TrainConfig

COMPONENT = "agent"


def save_agent(run_dir: Path, iteration: int, agent: OffPolicyAgent, config: TrainConfig, space: RandomizationSpace,
               wall_time: float) -> Path:
    payload = {"iteration": iteration, "agent_steps": agent.transitions_seen, "wall_time": wall_time,
               "config": config.to_dict(), **run_identity(config.env_id, space.to_dict(), agent.obs_dim, agent.act_dim),
               "sampler_kind": config.sampler, "agent": agent.state_dict()}
    return save_checkpoint(checkpoint_dir(run_dir) / component_file(COMPONENT, iteration), payload)


def load_agent(run_dir: Path, agent: OffPolicyAgent, config: TrainConfig, space: RandomizationSpace) -> dict[str, Any]:
    """Restore ``agent`` from the run's manifest; returns the payload (iteration, wall_time, ...)."""
    payload = load_component(run_dir, COMPONENT)
    check_config(payload["config"], config, run_dir)
    check_identity(payload, run_identity(config.env_id, space.to_dict(), agent.obs_dim, agent.act_dim), run_dir)
    try:
        agent.load_state_dict(payload["agent"])
    except (KeyError, ValueError, RuntimeError) as error:
        raise CheckpointError(f"the agent checkpoint of {run_dir} does not fit this run: {error}") from None
    return payload
