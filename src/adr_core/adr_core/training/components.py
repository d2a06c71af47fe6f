"""What a run of Algorithm 1 is built from, built in one place from its config: the randomized and reference envs
(their space and sizes), the sampler and the discriminator, each seeded from the run seed by its own name
(``component_seed``), so the order in which they are built changes nothing. The in-process trainer adds the agent,
the probe a frozen policy; the nodes build their one part with the same calls (``TrainConfig.make_sampler``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import gymnasium as gym
import numpy as np
import torch

from ..base.seeding import component_seed
from ..discriminator import DiscriminatorRewarder
from ..envs import make_env
from ..randomization import RandomizationSpace
from ..samplers import Sampler

if TYPE_CHECKING:
    from gymnasium.spaces import Box

    from ..envs.randomized import RandomizedEnvMixin
    from .config import TrainConfig


@dataclass
class RunParts:
    randomized_env: gym.Env[Any, Any]
    reference_env: gym.Env[Any, Any]
    space: RandomizationSpace
    obs_dim: int
    act_dim: int
    sampler: Sampler
    discriminator: DiscriminatorRewarder


def build_run_parts(config: TrainConfig, device: torch.device | str = "cpu") -> RunParts:
    """The envs, sampler and discriminator of ``config``'s run (the discriminator on ``device``)."""
    env_kwargs = config.env_kwargs()
    randomized_env = make_env(config.env_id, **env_kwargs)
    reference_env = make_env(config.env_id, **env_kwargs)
    space = cast("RandomizedEnvMixin", randomized_env.unwrapped).randomization_space
    obs_dim = int(np.prod(cast("Box", randomized_env.observation_space).shape))
    act_dim = int(np.prod(cast("Box", randomized_env.action_space).shape))
    return RunParts(randomized_env, reference_env, space, obs_dim, act_dim,
                    config.make_sampler(space, component_seed(config.seed, "sampler")),
                    DiscriminatorRewarder(obs_dim, act_dim, config.discriminator,
                                          component_seed(config.seed, "discriminator"), device))
