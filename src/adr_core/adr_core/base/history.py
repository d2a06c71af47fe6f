"""Observation-action history: what a policy with memory sees (``agent.history_steps``; not in the paper).

A memoryless policy acts on the current observation only. Under randomized dynamics (servo gains, latency, speed
caps) the current observation does not say which arm the policy drives; the last few observations and actions do
(Peng et al., ICRA 2018: history or recurrence is what let a pushing policy trained in randomized simulation work on
a real arm). With ``k`` steps of history the networks' input is

    [ o_t,  o_{t-1}[index], a_{t-1},  o_{t-2}[index], a_{t-2},  ...,  o_{t-k}[index], a_{t-k} ]

``index``: the observation components kept per past step (all but the goal of a goal-reaching env: the goal does not
change within an episode, and goal relabelling rewrites it in ``o_t`` only). Before the episode's first step the
past is the first observation with zero actions (the Ergo envs' zero action holds the start pose).

``HistorySpec`` describes it (it travels with the actor's weights as one float vector, so checkpoints, the graph's
policy messages and exports carry it); ``History`` builds inputs step by step (rollouts, the arm's policy runner);
``stack_episode`` builds the same inputs for a whole recorded episode at once (the replay buffer). Numpy only: the
arm's computer runs it without torch.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_HISTORY_STEPS = 16


class HistoryError(ValueError):
    """A history description or input that does not fit."""


@dataclass(frozen=True)
class HistorySpec:
    steps: int  # k past steps
    obs_dim: int  # the env's observation size
    act_dim: int
    index: tuple[int, ...]  # observation components kept per past step

    def __post_init__(self) -> None:
        if not 1 <= self.steps <= MAX_HISTORY_STEPS:
            raise HistoryError(f"history steps must be in [1, {MAX_HISTORY_STEPS}], got {self.steps}")
        if self.obs_dim < 1 or self.act_dim < 1 or not self.index:
            raise HistoryError(f"history of obs_dim {self.obs_dim}, act_dim {self.act_dim}, index {self.index}")
        if len(set(self.index)) != len(self.index) or min(self.index) < 0 or max(self.index) >= self.obs_dim:
            raise HistoryError(f"history index {list(self.index)} must be distinct components of the "
                               f"{self.obs_dim}-value observation")

    @classmethod
    def for_env(cls, steps: int, obs_dim: int, act_dim: int, goal: tuple[int, int] | None = None) -> HistorySpec:
        """Every observation component but the goal span ``goal`` (``obs[start:stop]``), if the env has one."""
        skip = set(range(*goal)) if goal is not None else set()
        return cls(int(steps), int(obs_dim), int(act_dim), tuple(i for i in range(int(obs_dim)) if i not in skip))

    @property
    def past_dim(self) -> int:
        """Values per past step."""
        return len(self.index) + self.act_dim

    @property
    def input_dim(self) -> int:
        return self.obs_dim + self.steps * self.past_dim

    def to_vector(self) -> np.ndarray:
        """``[steps, obs_dim, act_dim, *index]`` as float32 (exact for these small integers)."""
        return np.array([self.steps, self.obs_dim, self.act_dim, *self.index], dtype=np.float32)

    @classmethod
    def from_vector(cls, vector: Sequence[float] | np.ndarray) -> HistorySpec:
        values = np.asarray(vector, dtype=np.float64).reshape(-1)
        if values.size < 4 or not np.all(np.isfinite(values)) or np.any(values != np.round(values)):
            raise HistoryError(f"a history vector holds whole numbers [steps, obs_dim, act_dim, *index], got "
                               f"{values.tolist()[:8]}")
        steps, obs_dim, act_dim, *index = (int(v) for v in values)
        return cls(steps, obs_dim, act_dim, tuple(index))

    def to_json(self) -> dict[str, object]:
        return {"steps": self.steps, "obs_dim": self.obs_dim, "act_dim": self.act_dim, "index": list(self.index)}

    @classmethod
    def from_json(cls, data: object) -> HistorySpec:
        if not isinstance(data, dict) or set(data) != {"steps", "obs_dim", "act_dim", "index"}:
            raise HistoryError(f"a history is {{steps, obs_dim, act_dim, index}}, got {data!r}")
        index = data["index"]
        if not isinstance(index, list) or not all(isinstance(i, int) for i in index):
            raise HistoryError(f"history index must be a list of integers, got {index!r}")
        values = [data["steps"], data["obs_dim"], data["act_dim"]]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise HistoryError(f"history steps, obs_dim and act_dim must be integers, got {values}")
        steps, obs_dim, act_dim = (int(v) for v in values)
        return cls(steps, obs_dim, act_dim, tuple(index))


class History:
    """The last ``steps`` (observation part, action) pairs of the episode being played, newest first."""

    def __init__(self, spec: HistorySpec) -> None:
        self.spec = spec
        self._index = np.asarray(spec.index, dtype=np.int64)
        self._past: deque[np.ndarray] = deque(maxlen=spec.steps)
        self._started = False

    def reset(self, obs: np.ndarray) -> None:
        """A new episode whose first observation is ``obs``."""
        first = self._pair(obs, np.zeros(self.spec.act_dim, dtype=np.float32))
        self._past.clear()
        self._past.extend([first] * self.spec.steps)
        self._started = True

    def input(self, obs: np.ndarray) -> np.ndarray:
        """The networks' input for ``obs`` (float32, ``input_dim``)."""
        if not self._started:
            raise HistoryError("History.input before reset: a policy with memory needs the episode's start")
        obs = np.asarray(obs, dtype=np.float32).reshape(-1)
        if obs.shape != (self.spec.obs_dim,):
            raise HistoryError(f"an observation of {obs.size} values; this history is for {self.spec.obs_dim}")
        return np.concatenate([obs, *self._past])

    def push(self, obs: np.ndarray, action: np.ndarray) -> None:
        """The action taken at ``obs`` (as executed: clipped, float32)."""
        self._past.appendleft(self._pair(obs, action))

    def _pair(self, obs: np.ndarray, action: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=np.float32).reshape(-1)
        action = np.asarray(action, dtype=np.float32).reshape(-1)
        if obs.shape != (self.spec.obs_dim,) or action.shape != (self.spec.act_dim,):
            raise HistoryError(f"a step of {obs.size} observations and {action.size} actions; this history is for "
                               f"{self.spec.obs_dim} and {self.spec.act_dim}")
        return np.concatenate([obs[self._index], action])


def stack_episode(spec: HistorySpec, obs: np.ndarray, actions: np.ndarray,
                  next_obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inputs at every step of one episode and at every next state: ``(T, input_dim)`` each, float32; row t equals
    ``History.input`` at step t (and at step t + 1 for the next state) of the same episode played step by step."""
    obs = np.asarray(obs, dtype=np.float32)
    actions = np.asarray(actions, dtype=np.float32)
    next_obs = np.asarray(next_obs, dtype=np.float32)
    length, k = len(obs), spec.steps
    if length == 0:
        return np.zeros((0, spec.input_dim), np.float32), np.zeros((0, spec.input_dim), np.float32)
    index = np.asarray(spec.index, dtype=np.int64)
    pairs = np.concatenate([obs[:, index], actions], axis=1)  # (T, p): P_t
    first = np.concatenate([obs[0, index], np.zeros(spec.act_dim, np.float32)])
    padded = np.concatenate([np.tile(first, (k, 1)), pairs])  # padded[k + j] = P_j, P_{<0} = first
    t = np.arange(length)
    past = padded[(k + t - 1)[:, None] - np.arange(k)[None, :]]  # (T, k, p): P_{t-1} ... P_{t-k}
    next_past = padded[(k + t)[:, None] - np.arange(k)[None, :]]  # P_t ... P_{t-k+1}
    inputs = np.concatenate([obs, past.reshape(length, -1)], axis=1)
    next_inputs = np.concatenate([next_obs, next_past.reshape(length, -1)], axis=1)
    return inputs, next_inputs
