"""The tip position of measured joint angles, from the simulator's own forward kinematics.

``ErgoJrSim`` is the PyBullet model the envs step (same URDF, same base position); its ``end_effector_position``
is what the envs use for the tip, the goal and the reward.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from adr_core.envs.ergo_jr import JOINT_NAMES, ErgoJrSim

from .task import DeployTask


class TipKinematics:
    def __init__(self, task: DeployTask) -> None:
        self._sim = ErgoJrSim(task.base_position)

    def tip(self, positions: Mapping[str, float]) -> np.ndarray:
        """Tip (end_effector link) in the env's world frame [m] for all six joint angles [rad]."""
        self._sim.set_joint_angles(self._sim.joint_indices, [positions[name] for name in JOINT_NAMES])
        return np.array(self._sim.end_effector_position(), dtype=np.float64)

    def close(self) -> None:
        self._sim.close()
