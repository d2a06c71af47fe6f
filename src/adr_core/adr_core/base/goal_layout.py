"""Where a goal-reaching env's observation holds the goal, what is moved to it, and the effector that moves it.

An env with a ``GoalLayout`` (its ``EnvRecord.goal_layout``) promises that its per-step reward is

    r(s, a, s') = -|| achieved(s') - goal(s') || + (terms that do not depend on the goal)

with ``achieved(o) = o[achieved[0]:achieved[1]]`` and ``goal(o) = o[goal[0]:goal[1]]`` (the same units in both). The
agents' goal relabelling and potential shaping (``adr_core.agents.goals``) rely on exactly that; the env tests check
it step by step for every env that declares a layout.
"""
from __future__ import annotations

from dataclasses import dataclass

Span = tuple[int, int]  # obs[start:stop]


@dataclass(frozen=True)
class GoalLayout:
    goal: Span  # the goal the reward measures against (e.g. the puck's target on the table)
    achieved: Span  # what the task moves to the goal (the puck; the tip for a reacher)
    effector: Span | None = None  # what moves it (the arm's tip): potential shaping pulls it toward ``achieved``
    # the effector's height and the height it works at (obs index, metres), when the task lies in a plane the
    # effector must come down to: shaping then measures the 3-D gap to the achieved point at that height
    effector_height: tuple[int, float] | None = None
    # how far behind the achieved point, on the line from the goal through it, the effector should be to push it
    # there (the puck's radius plus the tip's): shaping with ``agent.shaping_target: behind`` pulls it to that point
    push_offset: float = 0.0

    def __post_init__(self) -> None:
        spans = {"goal": self.goal, "achieved": self.achieved, "effector": self.effector}
        for name, span in spans.items():
            if span is None:
                continue
            start, stop = span
            if not 0 <= start < stop:
                raise ValueError(f"goal layout: {name} must be obs[start:stop] with 0 <= start < stop, got {span}")
        if self.effector_height is not None and (self.effector is None or self.effector_height[0] < 0):
            raise ValueError("goal layout: effector_height needs an effector and a non-negative obs index")
        if not 0.0 <= self.push_offset < 1.0:
            raise ValueError(f"goal layout: push_offset must be in [0, 1), got {self.push_offset}")
        width = self.goal[1] - self.goal[0]
        for name in ("achieved", "effector"):
            span = spans[name]
            if span is not None and span[1] - span[0] != width:
                raise ValueError(f"goal layout: {name} {span} and goal {self.goal} must have the same width")

    @property
    def width(self) -> int:
        return self.goal[1] - self.goal[0]

    def fits(self, obs_dim: int) -> bool:
        spans = [self.goal, self.achieved] + ([self.effector] if self.effector is not None else [])
        height = [] if self.effector_height is None else [self.effector_height[0] + 1]
        return all(stop <= obs_dim for _, stop in spans) and all(stop <= obs_dim for stop in height)
