"""adr/Pusher3DOF-v0: a 3-DoF planar arm pushes a puck to a goal (MuJoCo, model in assets/pusher3dof.xml).

Arena: the square [-1, 1]^2 m, arm base at the origin, links 0.45 / 0.35 / 0.25 m (reach 1.05 m). At reset the arm
starts stretched along +x (joint noise U(-0.1, 0.1) rad), the puck at x in [0.35, 0.75], y in [0.15, 0.45], the
goal at x in [0.0, 0.6], y in [0.55, 0.85], at least 0.4 m from the puck.

Observation (14, float32): joint angles (3), puck xy (2), joint velocities (3), puck velocity xy (2), tip xy (2),
goal xy (2).
Action (3, [-1, 1]): joint torques (motor gears 1.0 / 0.5 / 0.2 N*m). Frame skip 5 at dt 0.01 s -> 20 Hz, 100 steps.
Reward: -||puck - goal|| - 0.01 * ||clip(action, -1, 1)||^2 per step. As in gymnasium's MuJoCo envs, the
tip position is MuJoCo's kinematics of the last physics substep's start (one 0.01 s substep behind qpos).
Info (every step): ``distance`` = ||puck - goal|| after the step, ``final_distance`` = the same value (the one of
the episode's last step is the final distance). Solved: final distance < 0.25 m (a quarter of the arena's
half-width). Randomized: frictionloss and damping of the puck's x and y slide joints (model.dof_*; no reload).
"""
from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if "MUJOCO_GL" not in os.environ and not os.environ.get("DISPLAY"):
    os.environ["MUJOCO_GL"] = "egl"  # headless rendering; must be chosen before mujoco is imported

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..randomization import RandomizationSpace
from .asset_paths import PUSHER3DOF_MJCF
from .extras import require
from .randomized import RandomizedEnvMixin
from .registry import env_record

if TYPE_CHECKING:
    import mujoco
else:
    mujoco = require("mujoco", "adr/Pusher3DOF-v0")  # not installed: one line naming the pip extra

ENV_ID = "adr/Pusher3DOF-v0"
FRICTIONLOSS, DAMPING = "puck_frictionloss", "puck_damping"
FRAME_SKIP = 5
CONTROL_COST = 0.01
SOLVED_DISTANCE = env_record(ENV_ID).solved.threshold  # 0.25
ARM_NOISE = 0.1
PUCK_BOX = ((0.35, 0.15), (0.75, 0.45))
GOAL_BOX = ((0.0, 0.55), (0.6, 0.85))
MIN_START_DISTANCE = 0.4
OBS_SIZE = 14


class Pusher3DOFEnv(RandomizedEnvMixin, gym.Env):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}

    def __init__(self, render_mode: str | None = None, space: RandomizationSpace | str | None = None,
                 width: int = 480, height: int = 480) -> None:
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.render_mode = render_mode
        self._render_size = (height, width)
        self._renderer: mujoco.Renderer | None = None
        self.model = mujoco.MjModel.from_xml_path(str(PUSHER3DOF_MJCF))
        self.data = mujoco.MjData(self.model)
        joint: Callable[[str], int] = (  # noqa: E731
            lambda name: mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, name)
        )
        self._puck_dofs = np.array([self.model.jnt_dofadr[joint("puck_x")], self.model.jnt_dofadr[joint("puck_y")]])
        self._puck_qpos = int(self.model.jnt_qposadr[joint("puck_x")])
        self._tip = self.data.site("tip").xpos
        goal_body = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, "goal")
        self._goal: np.ndarray = self.data.mocap_pos[self.model.body_mocapid[goal_body]]
        self._puck: np.ndarray = self.data.qpos[self._puck_qpos:self._puck_qpos + 2]
        self._puck_vel = self.data.qvel[self._puck_dofs[0]:self._puck_dofs[0] + 2]
        self._ctrl = self.data.ctrl
        # views into MjData (fixed memory): the observation is one concatenate of them
        # (qpos = 3 arm angles + puck xy and qvel = their rates are contiguous: 4 parts, one concatenate)
        self._obs_parts = (self.data.qpos, self.data.qvel, self._tip[:2], self._goal[:2])

        self.action_space = spaces.Box(-1.0, 1.0, (3,), dtype=np.float32)
        self.observation_space = spaces.Box(-np.inf, np.inf, (OBS_SIZE,), dtype=np.float32)
        self._init_randomization(space, ENV_ID, (FRICTIONLOSS, DAMPING))

    def _apply_parameters(self, values: np.ndarray) -> None:
        self.model.dof_frictionloss[self._puck_dofs] = self._param(values, FRICTIONLOSS)
        self.model.dof_damping[self._puck_dofs] = self._param(values, DAMPING)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        parameters = self._begin_episode_parameters()
        super().reset(seed=seed)
        rng = self.np_random
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[:3] = rng.uniform(-ARM_NOISE, ARM_NOISE, 3)
        puck = rng.uniform(*PUCK_BOX)
        goal = rng.uniform(*GOAL_BOX)
        while math.dist(puck, goal) < MIN_START_DISTANCE:
            goal = rng.uniform(*GOAL_BOX)
        self._puck[:] = puck
        self._goal[:2] = goal
        mujoco.mj_forward(self.model, self.data)
        distance = self._distance()
        return self._observation(), {"parameters": parameters, "distance": distance, "final_distance": distance}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        # MuJoCo clamps ctrl to ctrlrange [-1, 1] itself (ctrllimited), so no np.clip here; the cost uses the
        # clamped values too
        ctrl = self._ctrl
        ctrl[:] = action
        mujoco.mj_step(self.model, self.data, nstep=FRAME_SKIP)
        a0, a1, a2 = ctrl.tolist()
        cost = min(a0 * a0, 1.0) + min(a1 * a1, 1.0) + min(a2 * a2, 1.0)
        distance = self._distance()
        reward = -distance - CONTROL_COST * cost
        return self._observation(), reward, False, False, {"distance": distance, "final_distance": distance}

    def _distance(self) -> float:
        puck, goal = self._puck, self._goal
        return math.hypot(puck[0] - goal[0], puck[1] - goal[1])

    def _observation(self) -> np.ndarray:
        return np.concatenate(self._obs_parts, dtype=np.float32)

    @property
    def puck_position(self) -> np.ndarray:
        return self._puck.copy()

    @property
    def goal_position(self) -> np.ndarray:
        return self._goal[:2].copy()

    @property
    def tip_position(self) -> np.ndarray:
        """The arm's tip (x, y, z) as the observation has it (the kinematics of the last substep's start)."""
        return np.array(self._tip, dtype=np.float64)

    def is_solved(self, episode_return: float, info: dict[str, Any]) -> bool:
        return float(info["final_distance"]) < SOLVED_DISTANCE

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array":
            return None
        if self._renderer is None:
            self._renderer = mujoco.Renderer(self.model, *self._render_size)
        self._renderer.update_scene(self.data, camera="top")
        frame: np.ndarray = self._renderer.render()
        return frame

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
