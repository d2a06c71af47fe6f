"""Agents: DDPG (the paper's), TD3, SAC and CrossQ behind one interface (``base.OffPolicyAgent``), replay buffer,
networks."""

from __future__ import annotations

import torch

from ..base.goal_layout import GoalLayout
from .base import OffPolicyAgent
from .config import AgentConfig
from .crossq import CrossQ
from .ddpg import DDPG
from .networks import Actor, ActorPolicy, Critic, actor_from_state_dict
from .replay_buffer import ReplayBuffer
from .sac import SAC
from .td3 import TD3

AGENTS: dict[str, type[OffPolicyAgent]] = {"ddpg": DDPG, "td3": TD3, "sac": SAC, "crossq": CrossQ}


def make_agent(config: AgentConfig, obs_dim: int, act_dim: int, seed: int,
               device: torch.device | str = "cpu", goal_layout: GoalLayout | None = None) -> OffPolicyAgent:
    """The agent of ``config.algorithm``; ``goal_layout``: the env's (its record's), for goal relabelling and
    potential shaping (``agent.her_future``, ``agent.shaping_weight``)."""
    return AGENTS[config.algorithm](obs_dim, act_dim, config, seed, device, goal_layout)


__all__ = ["AGENTS", "Actor", "ActorPolicy", "AgentConfig", "Critic", "CrossQ", "DDPG", "OffPolicyAgent",
           "ReplayBuffer", "SAC", "TD3", "actor_from_state_dict", "make_agent"]
