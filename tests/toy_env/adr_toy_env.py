"""A toy randomized env that lives outside adr_core: how a user adds an env (docs/environments.md "Adding an env").

A point of mass ``mass`` on a line is pushed towards a goal; the randomized dimension is the mass. Everything the
stack needs to know about it is its record below; importing this module registers it (config key ``env_modules``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from adr_core.envs import EnvRecord, SolvedCriterion, register_env
from adr_core.envs.randomized import RandomizedEnvMixin

ENV_ID = "toy/PointMass-v0"
DT, STEPS = 0.1, 40


class PointMassEnv(RandomizedEnvMixin, gym.Env):
    def __init__(self, space: Any = None) -> None:
        self.action_space = spaces.Box(-1.0, 1.0, (1,), dtype=np.float32)
        self.observation_space = spaces.Box(-np.inf, np.inf, (3,), dtype=np.float32)
        self._init_randomization(space, ENV_ID, ("mass",))

    def _apply_parameters(self, values: np.ndarray) -> None:
        self.mass = self._param(values, "mass")

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        parameters = self._begin_episode_parameters()
        super().reset(seed=seed)
        self.x, self.v = 0.0, 0.0
        self.goal = float(self.np_random.uniform(0.5, 1.0))
        distance = abs(self.goal - self.x)
        return self._obs(), {"parameters": parameters, "distance": distance, "final_distance": distance}

    def step(self, action: np.ndarray):
        force = float(np.clip(action[0], -1.0, 1.0))
        self.v = float(np.clip(self.v + DT * force / self.mass, -1.0, 1.0))
        self.x = float(np.clip(self.x + DT * self.v, -2.0, 3.0))  # |reward| <= 3 per step (the record's bound: 10)
        distance = abs(self.goal - self.x)
        return self._obs(), -distance, False, False, {"distance": distance, "final_distance": distance}

    def _obs(self) -> np.ndarray:
        return np.array([self.x, self.v, self.goal - self.x], dtype=np.float32)

    def is_solved(self, episode_return: float, info: dict[str, Any]) -> bool:
        return float(info["final_distance"]) < 0.1


RECORD = register_env(EnvRecord(
    ENV_ID, f"{__name__}:PointMassEnv", STEPS, SolvedCriterion("final_distance", 0.1, False), paper_particles=2,
    reward_bound_per_step=10.0, space_file=Path(__file__).with_name("PointMass-v0.yaml")))
