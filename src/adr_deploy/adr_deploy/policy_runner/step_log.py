"""Per-step logs of the episodes on the arm, beside the simulator's episode at the same goal, in one CSV file.

One row per control step and source:

    episode, source, step, t_s, feedback_age_s, distance_m, goal_x, goal_y, goal_z, obs_0.., action_0.., joint_<m1..m6>

``source`` is ``real`` (measured on the arm, or on the emulated bus) or ``sim`` (the reference simulator's episode at
the same goal and start, which random goals run anyway; clicked goals have none). ``distance_m`` is the task's
distance (tip-goal, or puck-goal for ErgoPusher) *after* the step's command: for the arm from the next feedback
(the last step: the final feedback, i.e. the summary's ``final_distance``), for the simulator ``-reward`` of the
step. ``t_s`` is the command's send time from the episode's first command (sim: step x control period);
``feedback_age_s`` how old the joint_states behind the observation were; ``joint_*`` the measured angles [rad]
(real rows). Rows of an episode are written when it ends (nothing is written inside the control loop), aborted
episodes included.
"""
from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import DeployError

SOURCES = ("real", "sim")
FIXED_COLUMNS = ("episode", "source", "step", "t_s", "feedback_age_s", "distance_m", "goal_x", "goal_y", "goal_z")


@dataclass(frozen=True)
class SimulatedEpisode:
    """The reference simulator's episode at a goal: observations, actions and the distance after each step."""

    obs: np.ndarray  # (T, obs_dim)
    actions: np.ndarray  # (T, act_dim)
    distances: np.ndarray  # (T,) m, after each step
    control_period_s: float


@dataclass
class EpisodeSteps:
    """What the runner measured at each step of one episode on the arm."""

    episode: int  # 1-based, as in the summaries
    goal: tuple[float, float, float]
    t_s: list[float] = field(default_factory=list)
    feedback_age_s: list[float] = field(default_factory=list)
    distance_at_obs_m: list[float] = field(default_factory=list)  # at the observation, before the step's command
    obs: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    joints: list[Sequence[float]] = field(default_factory=list)

    def add(self, t: float, feedback_age: float, distance: float, obs: np.ndarray, action: np.ndarray,
            joints: Sequence[float]) -> None:
        self.t_s.append(t)
        self.feedback_age_s.append(feedback_age)
        self.distance_at_obs_m.append(distance)
        self.obs.append(np.asarray(obs, dtype=np.float64).copy())
        self.actions.append(np.asarray(action, dtype=np.float64).copy())
        self.joints.append(list(joints))

    def distances_after(self, final_distance: float | None) -> list[float]:
        """Distance after each step: the next observation's, and ``final_distance`` (NaN if none) for the last."""
        after = self.distance_at_obs_m[1:] + [math.nan if final_distance is None else final_distance]
        return after[:len(self.t_s)]


class StepLog:
    """Appends episodes to one CSV file; refuses a file whose columns are for another policy or arm."""

    def __init__(self, path: str | Path, obs_dim: int, act_dim: int, joint_names: Sequence[str]) -> None:
        self.path = Path(path).expanduser().resolve()
        self.obs_dim, self.act_dim, self.joint_names = obs_dim, act_dim, tuple(joint_names)
        self.columns = [*FIXED_COLUMNS, *(f"obs_{i}" for i in range(obs_dim)),
                        *(f"action_{i}" for i in range(act_dim)), *(f"joint_{n}" for n in self.joint_names)]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.is_file() and self.path.stat().st_size > 0:
                with self.path.open(newline="") as handle:
                    header = next(csv.reader(handle), [])
                if header != self.columns:
                    raise DeployError(f"{self.path} holds steps with other columns ({len(header)} columns: another "
                                      f"policy or arm); choose another steps_file")
            else:
                with self.path.open("w", newline="") as handle:
                    csv.writer(handle).writerow(self.columns)
        except OSError as error:
            raise DeployError(f"cannot write the steps file {self.path}: {error.strerror or error}") from None

    def append(self, steps: EpisodeSteps, final_distance: float | None, simulated: SimulatedEpisode | None) -> int:
        """Write the episode's real rows, then its simulated ones; the number of rows written."""
        rows = []
        goal = [_number(v) for v in steps.goal]
        after = steps.distances_after(final_distance)
        for k, t in enumerate(steps.t_s):
            rows.append([steps.episode, "real", k, _number(t), _number(steps.feedback_age_s[k]), _number(after[k]),
                         *goal, *map(_number, steps.obs[k]), *map(_number, steps.actions[k]),
                         *map(_number, steps.joints[k])])
        if simulated is not None:
            blank_joints = [""] * len(self.joint_names)
            for k in range(len(simulated.distances)):
                rows.append([steps.episode, "sim", k, _number(k * simulated.control_period_s), "",
                             _number(simulated.distances[k]), *goal, *map(_number, simulated.obs[k]),
                             *map(_number, simulated.actions[k]), *blank_joints])
        with self.path.open("a", newline="") as handle:
            csv.writer(handle).writerows(rows)
        return len(rows)


def _number(value: float) -> str:
    value = float(value)
    return "" if math.isnan(value) else repr(value)
