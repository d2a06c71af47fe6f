"""The stable-baselines3 side of the time-to-land runs: a callback that plays the reference episodes every
``eval_every`` env steps with the training clock stopped (experiments/landing.py's episodes) and ends the run after
``max_minutes`` of training time. Used by sb3_zoo_lander.py and sb3_robot.py."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from experiments.landing import CURVE_SEED, evaluate_callable


class EvaluationClock(BaseCallback):  # type: ignore[misc]
    """``curve``: one point per evaluation (agent steps, training s, evaluation s, return, solved share);
    ``training_seconds()``: wall time since training started, evaluations excluded."""

    def __init__(self, policy: Callable[[np.ndarray], np.ndarray], eval_env: Any, *, eval_every: int,
                 eval_episodes: int, max_minutes: float, label: str) -> None:
        super().__init__()
        self.policy, self.eval_env, self.eval_every, self.eval_episodes = policy, eval_env, eval_every, eval_episodes
        self.max_minutes, self.label = max_minutes, label
        self.curve: list[dict[str, Any]] = []
        self.started, self.evaluating = 0.0, 0.0

    def training_seconds(self) -> float:
        return time.perf_counter() - self.started - self.evaluating

    def _on_training_start(self) -> None:
        self.started = time.perf_counter()
        self.next_eval = self.eval_every

    def _on_step(self) -> bool:
        train_s = self.training_seconds()
        if self.num_timesteps >= self.next_eval:
            self.next_eval += self.eval_every
            started = time.perf_counter()
            score = evaluate_callable(self.policy, self.eval_episodes, CURVE_SEED, self.eval_env)
            seconds = time.perf_counter() - started
            self.evaluating += seconds
            self.curve.append({"agent_steps": self.num_timesteps, "train_s": train_s, "evaluation_s": seconds,
                               "return_mean": score["return_mean"], "solved": score["solved_fraction"]})
            print(f"{self.label}: {self.curve[-1]}", flush=True)
        return train_s < 60.0 * self.max_minutes
