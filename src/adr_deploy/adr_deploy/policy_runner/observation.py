"""Measured state + goal -> the env's observation; the policy's action -> target positions of all six joints.

Both mappings are written here from the env's constants (``DeployTask``) in the same order of operations as
``ErgoReacherEnv._observation`` / ``ErgoPusherEnv._observation`` and ``ErgoJrSim.scaled_targets``; the tests
check them against the envs step by step.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .readings import JointReading, PuckReading
from .task import HELD_TARGET_RAD, DeployTask


def observation_scale(task: DeployTask) -> np.ndarray:
    n = len(task.actuated)
    rest = task.obs_dim - 2 * n
    return np.array([1 / task.action_scale] * n + [1 / task.velocity_scale] * n + [1.0] * rest, dtype=np.float32)


def build_observation(task: DeployTask, joints: JointReading, goal_observed: Sequence[float],
                      tip: Sequence[float] | np.ndarray | None = None, puck: PuckReading | None = None) -> np.ndarray:
    """ErgoReacher: [angles, velocities, goal y, z]; ErgoPusher: [angles, velocities, tip xyz, puck xy, puck v xy,
    goal xy] (angles / (pi/2), velocities / 11.9 rad/s, metres in the env's world frame)."""
    angles = [joints.positions[name] for name in task.actuated]
    velocities = [joints.velocities[name] for name in task.actuated]
    goal = [float(v) for v in goal_observed]
    if task.needs_puck:
        if tip is None or puck is None:
            raise ValueError(f"{task.env_id} observations need the tip and the puck")
        extra = [tip[0], tip[1], tip[2], *puck.position, *puck.velocity, *goal]
    else:
        extra = goal
    obs = np.array(angles + velocities + extra, dtype=np.float32)
    obs *= observation_scale(task)
    return obs


def clipped_action(action: np.ndarray, act_dim: int) -> np.ndarray:
    """As ``adr_core.rollout.rollout`` hands actions to the env: clipped to [-1, 1], float32."""
    action = np.asarray(action, dtype=np.float64).reshape(-1)
    if action.shape != (act_dim,) or not np.all(np.isfinite(action)):
        raise ValueError(f"policy produced {action.tolist()}; expected {act_dim} finite values")
    return np.clip(action, -1.0, 1.0).astype(np.float32)


def joint_targets(task: DeployTask, action: np.ndarray, joint_order: Sequence[str]) -> list[float]:
    """Target positions [rad] of every joint in ``joint_order``: actuated ones ``clip(a) * scale`` (the env's
    servo targets), the others held at HELD_TARGET_RAD as the env holds them."""
    scale = task.action_scale
    targets = {name: (-scale if x < -1.0 else scale if x > 1.0 else x * scale)
               for name, x in zip(task.actuated, np.asarray(action).tolist())}
    return [targets.get(name, HELD_TARGET_RAD) for name in joint_order]
