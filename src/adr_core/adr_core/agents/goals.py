"""Goal relabelling and potential shaping of an episode's transitions, for envs with a ``GoalLayout``.

Both change only what the agent learns from, never the env, the rollouts, the discriminator's input or any reported
return (deviations from the paper, off by default; docs/algorithm.md "Goal relabelling and shaping"):

- **Potential shaping** (Ng, Harada & Russell 1999): the agent learns from ``r + gamma * phi(s') - phi(s)`` with
  ``phi(o) = -w * || effector(o) - achieved(o) ||`` (the arm's tip to the puck; with the layout's
  ``effector_height``, the 3-D distance to the puck at the height the tip pushes at). A potential-based term leaves the
  optimal policy of the task unchanged; it only tells the learner early that bringing the tip to the puck pays.
- **Goal relabelling** (HER, Andrychowicz et al. 2017, the "future" strategy): every transition is stored again
  ``k`` times, each copy with the goal replaced by what was achieved at a uniformly drawn later step of the same
  episode (that step included) and its reward recomputed for that goal. An episode that pushed the puck somewhere
  becomes an example of how to push it there.

The relabelled reward uses the layout's contract (``adr_core.base.goal_layout``): the reward's goal term is
``-||achieved(s') - goal(s')||``, so for a new goal ``g'`` the reward is ``r + ||achieved(s') - g|| -
||achieved(s') - g'||``. With n-step returns each copy keeps its goal over the whole n-step window and in the
bootstrap observation.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base.goal_layout import GoalLayout


@dataclass(frozen=True)
class Rows:
    """Transitions ready for the replay buffer (``ReplayBuffer.add``'s arguments)."""

    obs: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    next_obs: np.ndarray
    discounts: np.ndarray


def _span(array: np.ndarray, span: tuple[int, int]) -> np.ndarray:
    return array[..., span[0]:span[1]]


def shaped_rewards(rewards: np.ndarray, obs: np.ndarray, next_obs: np.ndarray, layout: GoalLayout, weight: float,
                   gamma: float, target: str = "object") -> np.ndarray:
    """``r + gamma * phi(s') - phi(s)`` with ``phi = -weight * ||effector - target||`` (float64, (T,)); ``target``
    'object': the achieved point (the puck), 'behind': the point ``layout.push_offset`` behind it on the line from the
    goal (where a push moves the puck toward the goal)."""
    if layout.effector is None:
        raise ValueError("potential shaping needs the layout's effector")

    effector = layout.effector

    height = layout.effector_height

    def potential(o: np.ndarray) -> np.ndarray:
        aim = _span(o, layout.achieved).astype(np.float64)
        if target == "behind":
            away = aim - _span(o, layout.goal)  # from the goal through the puck
            length = np.linalg.norm(away, axis=-1, keepdims=True)
            aim = aim + layout.push_offset * away / np.maximum(length, 1e-9)
        gap = _span(o, effector).astype(np.float64) - aim
        if height is not None:
            gap = np.concatenate([gap, o[..., height[0]:height[0] + 1].astype(np.float64) - height[1]], axis=-1)
        distance: np.ndarray = np.linalg.norm(gap, axis=-1)
        return -weight * distance

    shaped: np.ndarray = np.asarray(rewards, np.float64) + gamma * potential(next_obs) - potential(obs)
    return shaped


def nstep_windows(length: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Steps summed per transition (``m = min(n, T - t)``) and the index of each one's last step."""
    steps = np.minimum(n, length - np.arange(length))
    return steps, np.arange(length) + steps - 1


def relabelled_rows(obs: np.ndarray, actions: np.ndarray, rewards: np.ndarray, next_obs: np.ndarray,
                    terminated: np.ndarray, layout: GoalLayout, copies: int, gamma: float, n: int,
                    rng: np.random.Generator) -> Rows:
    """``copies`` relabelled versions of one episode's transitions (n-step targets), copy after copy.

    ``rewards`` are the rewards the agent learns from (already shaped, if shaping is on: the potential does not
    depend on the goal). Transition ``t`` of a copy gets the goal ``achieved(next_obs[f])`` with ``f`` drawn
    uniformly from ``t .. T-1``.
    """
    length = len(rewards)
    steps, last = nstep_windows(length, n)
    achieved = _span(next_obs, layout.achieved).astype(np.float64)  # (T, w): what step t achieved
    goal_free = np.asarray(rewards, np.float64) + np.linalg.norm(achieved - _span(next_obs, layout.goal), axis=-1)
    terminal_last = np.asarray(terminated, bool)[last]
    discounts = np.where(terminal_last, 0.0, np.power(float(gamma), steps))
    t = np.arange(length)
    parts: list[Rows] = []
    for _ in range(copies):
        future = t + np.floor(rng.random(length) * (length - t)).astype(np.int64)
        goals = achieved[future]  # (T, w)
        returns = np.zeros(length)
        for k in range(n):
            index = t + k
            valid = k < steps
            index = np.where(valid, index, last)
            reward = goal_free[index] - np.linalg.norm(achieved[index] - goals, axis=-1)
            returns += np.where(valid, gamma ** k * reward, 0.0)
        new_obs = np.array(obs, np.float32, copy=True)
        new_next = np.array(np.asarray(next_obs)[last], np.float32, copy=True)
        new_obs[:, layout.goal[0]:layout.goal[1]] = goals
        new_next[:, layout.goal[0]:layout.goal[1]] = goals
        parts.append(Rows(new_obs, np.asarray(actions), returns, new_next, discounts))
    return Rows(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("obs", "actions", "returns",
                                                                             "next_obs", "discounts")))
