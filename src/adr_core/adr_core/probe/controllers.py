"""Controllers whose failure region is known by construction: ground truth for the probe's sampler focus.

``lunar_lander_heuristic``: gymnasium's own hand-tuned lander (``gymnasium.envs.box2d.lunar_lander.heuristic``), tuned
by its authors for the default main engine (13). It holds attitude and throttles against a fixed target descent
rate, which a weak engine cannot deliver: measured with the probe's sweep (docs/algorithm.md), it solves 0 % of
episodes at main engine 8..10, ~60 % at 11 and all from 12 to 20. The region where it fails is the weak-engine
end of the training range, and only there.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..envs.ergo_jr import ErgoJrSim


class _ContinuousLander:
    """What ``heuristic`` reads of its env argument: ``env.unwrapped.continuous``."""

    continuous = True

    @property
    def unwrapped(self) -> _ContinuousLander:
        return self


_LANDER = _ContinuousLander()


def lunar_lander_heuristic(obs: np.ndarray) -> np.ndarray:
    """gymnasium's heuristic lander, continuous actions."""
    from gymnasium.envs.box2d.lunar_lander import heuristic

    action = heuristic(_LANDER, np.asarray(obs, dtype=np.float64))  # type: ignore[no-untyped-call]
    return np.asarray(action, dtype=np.float32)


class ErgoReacherController:
    """A reaching controller for adr/ErgoReacher-v0 that times its shoulder move for the default servo.

    It solves the arm's inverse kinematics for the goal in the observation (damped least squares on its own
    kinematic model: a PyBullet DIRECT copy of the arm), sends the elbow and wrist joints (m3, m5, m6) there at once
    and holds the shoulder (m2) still for ``shoulder_delay`` of the episode's 100 steps before sending it too, as a
    motion planned for the nominal servo speed would. The default shoulder servo arrives in time; a slower one (lower
    m2 gain) does not. By construction it fails where the m2 gain is low and only there (the probe's failure map
    measures the exact boundary).
    """

    def __init__(self, shoulder_delay: int = 82) -> None:
        self.shoulder_delay = shoulder_delay
        self._sim: ErgoJrSim | None = None
        self._goal: tuple[float, float] | None = None
        self._solution = np.zeros(4)
        self._hold = 0.0
        self._step = 0

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        from ..envs.ergo_reacher import ACTION_SCALE

        obs = np.asarray(obs, dtype=np.float64)
        goal = (round(float(obs[8]), 6), round(float(obs[9]), 6))
        if goal != self._goal:  # a new episode (goals are drawn per episode)
            self._goal, self._solution = goal, self._inverse_kinematics(goal)
            self._hold, self._step = float(obs[0]) * ACTION_SCALE, 0
        targets = self._solution.copy()
        if self._step < self.shoulder_delay:
            targets[0] = self._hold
        self._step += 1
        return np.clip(targets / ACTION_SCALE, -1.0, 1.0).astype(np.float32)
    def _inverse_kinematics(self, goal: tuple[float, float], iterations: int = 60) -> np.ndarray:
        from ..envs.ergo_jr import ErgoJrSim
        from ..envs.ergo_reacher import ACTION_SCALE, ACTUATED, BASE_POSITION

        if self._sim is None:
            self._sim = ErgoJrSim(BASE_POSITION)
            self._joints = [self._sim.joint(m) for m in ACTUATED]
        sim, target = self._sim, np.array([0.0, *goal])
        q = np.zeros(4)

        def tip(angles: np.ndarray) -> np.ndarray:
            sim.set_joint_angles(self._joints, angles)
            return np.array(sim.end_effector_position())

        for _ in range(iterations):
            position = tip(q)
            error = target - position
            if np.linalg.norm(error) < 1e-4:
                break
            jacobian = np.stack([(tip(q + 1e-4 * np.eye(4)[i]) - position) / 1e-4 for i in range(4)], axis=1)
            step = jacobian.T @ np.linalg.solve(jacobian @ jacobian.T + 1e-4 * np.eye(3), error)
            q = np.clip(q + step, -ACTION_SCALE, ACTION_SCALE)
        return q


ergo_reacher_controller = ErgoReacherController()
"""``adr_core.probe.controllers:ergo_reacher_controller``: the instance adr-probe imports."""
