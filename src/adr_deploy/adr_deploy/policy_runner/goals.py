"""Goals in the env's world frame: from rviz's "Publish Point" (``/clicked_point``) or drawn like in training.

World frame = the simulators' PyBullet world, published as ``world`` by the sim nodes and used as rviz's fixed frame
(``world -> base_link`` is a pure translation by the task's ``base_position``, z = 0.07 m). Points may also come in
``base_link``. ErgoReacher goals live in the arm's y-z plane (x = 0: m1 and m4 are held at 0), so a point's x is
dropped; ErgoPusher goals lie on the table (z = 0), so a point's z is dropped. The distance off that plane is
reported, never silently ignored.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import DeployError
from .step_log import SimulatedEpisode
from .task import DeployTask

ARM_PLANE_X = 0.0  # ErgoReacher: the tip's x for any pose with m1 = m4 = 0 (checked against the env in the tests)
TABLE_Z = 0.0  # ErgoPusher: the table top


@dataclass(frozen=True)
class Goal:
    world: tuple[float, float, float]  # in the env's world frame [m]
    source: str  # "random" or "clicked"
    off_plane_m: float = 0.0  # how far the given point was from the goal plane (clicked goals)
    puck_start: tuple[float, float] | None = None  # ErgoPusher, random goals: where the env would put the puck
    simulated_final_distance: float | None = None  # random goals: the same episode in the reference simulator
    simulated: SimulatedEpisode | None = field(default=None, compare=False, repr=False)  # that episode, step by step

    def observed(self, task: DeployTask) -> tuple[float, ...]:
        """The goal coordinates that enter the observation (y, z or x, y)."""
        return tuple(self.world[axis] for axis in task.goal_axes)


def goal_from_point(task: DeployTask, point: tuple[float, float, float], frame_id: str, world_frame: str,
                    base_frame: str) -> Goal:
    if frame_id == world_frame:
        world = np.asarray(point, dtype=np.float64)
    elif frame_id == base_frame:
        world = np.asarray(point, dtype=np.float64) + np.asarray(task.base_position)
    else:
        raise DeployError(f"goal in frame {frame_id!r}: expected {world_frame!r} (the simulators' world) or "
                          f"{base_frame!r}; set rviz's fixed frame to one of them")
    if not np.all(np.isfinite(world)):
        raise DeployError(f"goal {list(point)} is not finite")
    if task.needs_puck:
        off_plane = float(world[2] - TABLE_Z)
        world[2] = TABLE_Z
    else:
        off_plane = float(world[0] - ARM_PLANE_X)
        world[0] = ARM_PLANE_X
    return Goal(world=(float(world[0]), float(world[1]), float(world[2])), source="clicked",
                off_plane_m=abs(off_plane))


class ClickedGoals:
    """The newest accepted click, handed out once (thread-safe: filled by a ROS callback, taken by the runner)."""

    def __init__(self, topic: str) -> None:
        self.prompt = f"waiting for a goal on {topic} (rviz: Publish Point)"
        self._lock = threading.Lock()
        self._pending: Goal | None = None

    def offer(self, goal: Goal) -> None:
        with self._lock:
            self._pending = goal

    def next_goal(self, episode: int) -> Goal | None:
        with self._lock:
            goal, self._pending = self._pending, None
            return goal


class RandomGoals:
    """Goal k is the goal of evaluation episode k in the reference simulator (``adr_core.evaluation``: reset seed
    from ``(seed, EVALUATION_ITERATION, k, "reference")``), so real and simulated results compare goal by goal.
    That simulated episode is run too (about 10 ms) and its final distance is kept with the goal."""

    def __init__(self, task: DeployTask, policy, space, seed: int, episode_steps: int) -> None:
        from adr_core.envs import make_env

        self._task, self._policy, self._space, self._seed = task, policy, space, seed
        # the policy's own space (an identified arm's, say): its reference point is the simulator it compares with
        self._env = make_env(task.env_id, max_episode_steps=episode_steps, space=space)
        self.prompt = "drawing a goal like the training distribution"

    def next_goal(self, episode: int) -> Goal:
        from adr_core.evaluation.episodes import EVALUATION_ITERATION, EVALUATION_KIND
        from adr_core.rollout import rollout

        trajectory = rollout(self._env, self._policy, params=self._space.reference(),
                             params_normalized=self._space.reference_normalized(), kind=EVALUATION_KIND,
                             iteration=EVALUATION_ITERATION, slot=episode, run_seed=self._seed)
        unwrapped: Any = self._env.unwrapped  # an Ergo env: goal_position, puck_position
        # the episode is over but the goal stays; the puck start needs the reset state again
        goal = np.asarray(unwrapped.goal_position, dtype=np.float64)
        world = (float(goal[0]), float(goal[1]), float(goal[2]) if goal.size == 3 else TABLE_Z)
        puck_start = None
        if self._task.needs_puck:
            from adr_core.rollout import rollout_randomness

            reset_seed, _ = rollout_randomness(self._seed, EVALUATION_ITERATION, episode, EVALUATION_KIND)
            self._env.reset(seed=reset_seed)
            puck = unwrapped.puck_position
            puck_start = (float(puck[0]), float(puck[1]))
        distances = -trajectory.rewards.astype(np.float64)  # Ergo rewards: -distance after each step (float32)
        distances[-1] = trajectory.final_distance  # the summary's value, in full precision
        simulated = SimulatedEpisode(
            obs=trajectory.obs.astype(np.float64), actions=trajectory.actions.astype(np.float64),
            distances=distances, control_period_s=self._task.control_period_s)
        return Goal(world=world, source="random", puck_start=puck_start,
                    simulated_final_distance=float(trajectory.final_distance), simulated=simulated)

    def close(self) -> None:
        self._env.close()
