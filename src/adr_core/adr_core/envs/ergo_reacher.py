"""adr/ErgoReacher-v0: the Poppy Ergo Jr (PyBullet, assets/poppy_ergo_jr.urdf) touches a goal with its tip.

The arm stands upright; m1 (base yaw) and m4 (forearm roll) are held at 0, so the four actuated pitch
motors m2, m3, m5, m6 (zero-based motors 1, 2, 4, 5, as in the paper's code) move the tip in the y-z plane.
Goal: the tip position of a random pose of the actuated motors in [-pi/2, pi/2]^4 (reachable by
construction) whose height is at least 0.12 m. Start: all joints at 0 (+- 0.05 rad on the actuated ones).

Observation (10, float32): actuated joint angles / (pi/2) (4), actuated joint velocities / 11.9 rad/s (4),
goal y, z (m).
Action (4, [-1, 1]): servo target angles of m2, m3, m5, m6, scaled to +-pi/2.
Step: 4 physics steps of 1/240 s (60 Hz). 100 steps. Reward: -||tip - goal|| (m).
Info (every step): ``distance`` tip-goal after the step; ``final_distance`` = the same value.
Solved: final distance < 0.025 m. Randomized (per actuated motor): servo gain and max torque, see ergo_jr.py.
"""
from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..randomization import RandomizationSpace
from .ergo_jr import JOINT_NAMES, PHYSICS_DT, ErgoArmEnv
from .ergo_jr import SOLVED_DISTANCE as SOLVED_DISTANCE  # each env module names its solved threshold
from .randomized import RandomizedEnvMixin
from .sim_to_real import sim_to_real_dimensions

ENV_ID = "adr/ErgoReacher-v0"
ACTUATED = ("m2", "m3", "m5", "m6")
HELD = ("m1", "m4")
GAINS = tuple(f"{m}_gain" for m in ACTUATED)
MAX_TORQUES = tuple(f"{m}_max_torque" for m in ACTUATED)
HELD_GAIN, HELD_MAX_TORQUE = 0.1, 0.39  # the non-actuated servos: stiff, at the XL-320's stall torque
BASE_POSITION = (0.0, 0.0, 0.07)  # base box bottom on the ground
FRAME_SKIP = 4
ACTION_SCALE = math.pi / 2
VELOCITY_SCALE = 11.9  # rad/s, the XL-320's no-load speed
START_NOISE = 0.05
GOAL_MIN_HEIGHT = 0.12


class ErgoReacherEnv(RandomizedEnvMixin, ErgoArmEnv, gym.Env):
    metadata = {"render_modes": ["rgb_array"], "render_fps": round(1.0 / (FRAME_SKIP * PHYSICS_DT))}

    def __init__(self, render_mode: str | None = None, space: RandomizationSpace | str | None = None,
                 width: int = 320, height: int = 320) -> None:
        self._init_arm(render_mode, (width, height), BASE_POSITION, ACTUATED, HELD, FRAME_SKIP)
        self.sim.add_floor()
        self._goal_marker = self.sim.add_marker(0.01, (0.9, 0.15, 0.15, 1.0))
        self._initial_state = self.sim.save()
        self._goal = np.zeros(3)
        self._goal_yz = [0.0, 0.0]
        n = len(ACTUATED)
        self._obs_scale = np.array([1 / ACTION_SCALE] * n + [1 / VELOCITY_SCALE] * n + [1.0, 1.0], dtype=np.float32)
        self._gains = [0.0] * len(ACTUATED)
        self._max_torques = [0.0] * len(ACTUATED)
        self.action_space = spaces.Box(-1.0, 1.0, (len(ACTUATED),), dtype=np.float32)
        self.observation_space = spaces.Box(-np.inf, np.inf, (2 * len(ACTUATED) + 2,), dtype=np.float32)
        self._init_randomization(space, ENV_ID, GAINS + MAX_TORQUES, sim_to_real_dimensions(ACTUATED))
        self._sim_to_real.attach(self.randomization_space)

    def _apply_parameters(self, values: np.ndarray) -> None:
        self._gains = [self._param(values, name) for name in GAINS]
        self._max_torques = [self._param(values, name) for name in MAX_TORQUES]
        self._sim_to_real.set(lambda name, absent: self._param(values, name, absent))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        parameters = self._begin_episode_parameters()
        super().reset(seed=seed)
        sim, rng = self.sim, self.np_random
        sim.restore(self._initial_state)
        self._goal[:] = self._sample_goal(rng)
        self._goal_yz = self._goal[1:3].tolist()
        start = rng.uniform(-START_NOISE, START_NOISE, len(ACTUATED))
        sim.set_joint_angles(sim.joint_indices, np.zeros(len(JOINT_NAMES)))
        sim.set_joint_angles(self._actuated, start)
        self._start_servos(start.tolist(), HELD_GAIN, HELD_MAX_TORQUE)
        sim.move_marker(self._goal_marker, self._goal)
        distance = math.dist(sim.end_effector_position(), self._goal)
        return self._observation(), {"parameters": parameters, "distance": distance, "final_distance": distance}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self._actuate(self.sim.scaled_targets(action, ACTION_SCALE))
        distance = self._distance()
        return self._observation(), -distance, False, False, {"distance": distance, "final_distance": distance}

    def _sample_goal(self, rng: np.random.Generator) -> np.ndarray:
        sim = self.sim
        while True:
            sim.set_joint_angles(self._actuated, rng.uniform(-ACTION_SCALE, ACTION_SCALE, len(ACTUATED)))
            goal = np.array(sim.end_effector_position())
            if goal[2] >= GOAL_MIN_HEIGHT:
                return goal

    def _distance(self) -> float:
        return math.dist(self.sim.end_effector_position(), self._goal)

    def _observation(self) -> np.ndarray:
        angles, velocities = self._read_actuated()
        obs = np.array(angles + velocities + self._goal_yz, dtype=np.float32)
        obs *= self._obs_scale
        return obs

    @property
    def goal_position(self) -> np.ndarray:
        return self._goal.copy()

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array":
            return None
        return self.sim.render(*self._render_size, target=(0.0, 0.0, 0.15), distance=0.62, yaw=90.0, pitch=-12.0)
