"""Learning curves on fixed settings, recorded while training: a hook the trainers call once per iteration.

    evaluation = PeriodicEvaluation(run_dir, env_id, every=10)          # or every_steps=10_000
    ... after each completed iteration:
    evaluation.maybe_run(iteration, agent_steps, agent.actor_state_dict(), wall_time_s)

Every ``every`` iterations (or at the first iteration boundary at or past each multiple of ``every_steps`` agent
steps) it runs ``settings.evaluate`` in the calling process (deterministic policy, no noise) and appends one row to
``<run_dir>/evaluation.csv``: ``iteration, agent_steps, wall_time_s, evaluation_s, <setting>_return_mean,
_return_std, _solved_fraction, _final_distance_mean`` per setting. ``wall_time_s`` is the trainer's training time
(evaluation excluded); ``evaluation_s`` what this evaluation took; ``seconds_total`` sums the latter. On resume, rows
after the resumed checkpoint's iteration are dropped first (``iteration`` counts completed iterations, like the
checkpoints).
"""
from __future__ import annotations

import csv
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch

from ..randomization import RandomizationSpace, space_of
from .settings import SCORE_FIELDS, Settings, evaluate, flat_scores, resolve_settings

EVALUATION_FILE = "evaluation.csv"


class PeriodicEvaluation:
    def __init__(self, run_dir: str | Path, env_id: str, *, every: int = 10, every_steps: int = 0,
                 settings: Settings | None = None, episodes: int = 5, seeds: Sequence[int] = (0,),
                 max_episode_steps: int | None = None, start_iteration: int = 0,
                 space: RandomizationSpace | str | None = None) -> None:
        if every < 0 or every_steps < 0 or not (every or every_steps):
            raise ValueError(f"every ({every}) or every_steps ({every_steps}) must be >= 1, and neither negative")
        self.path = Path(run_dir) / EVALUATION_FILE
        self.env_id, self.every, self.every_steps, self.episodes = env_id, int(every), int(every_steps), int(episodes)
        self.seeds, self.max_episode_steps = tuple(seeds), max_episode_steps
        self.space = None if space is None else space_of(env_id, space)
        self.settings = resolve_settings(env_id, settings, space=self.space)
        scores = [f"{name}_{key}" for name in self.settings for key in SCORE_FIELDS]
        self.columns = ["iteration", "agent_steps", "wall_time_s", "evaluation_s", *scores]
        self.seconds_total = 0.0
        self._last_steps: int | None = None
        self._prepare_file(start_iteration)

    def due(self, iteration: int, agent_steps: int | None = None) -> bool:
        """``iteration`` counts completed iterations (1 after the first)."""
        if self.every_steps:
            if agent_steps is None:
                raise ValueError("an evaluation every N agent steps needs agent_steps")
            previous = self._last_steps if self._last_steps is not None else 0
            return agent_steps > 0 and agent_steps // self.every_steps > previous // self.every_steps
        return iteration > 0 and iteration % self.every == 0

    def maybe_run(self, iteration: int, agent_steps: int, actor_weights: Mapping[str, torch.Tensor],
                  wall_time_s: float = float("nan")) -> dict[str, float] | None:
        due = self.due(iteration, agent_steps)
        self._last_steps = int(agent_steps)
        return self.run(iteration, agent_steps, actor_weights, wall_time_s) if due else None

    def run(self, iteration: int, agent_steps: int, actor_weights: Mapping[str, torch.Tensor],
            wall_time_s: float = float("nan")) -> dict[str, float]:
        start = time.perf_counter()
        scores = evaluate(actor_weights, self.env_id, self.settings, self.episodes, self.seeds,
                          max_episode_steps=self.max_episode_steps, workers=1, space=self.space)
        seconds = time.perf_counter() - start
        self.seconds_total += seconds
        row = {"iteration": int(iteration), "agent_steps": int(agent_steps), "wall_time_s": float(wall_time_s),
               "evaluation_s": seconds, **flat_scores(scores)}
        with self.path.open("a", newline="") as handle:
            csv.writer(handle).writerow([_format(row[c]) for c in self.columns])
        return row

    def _prepare_file(self, start_iteration: int) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        kept: list[list[str]] = []
        if self.path.is_file():
            with self.path.open(newline="") as handle:
                rows = list(csv.reader(handle))
            if rows and rows[0] == self.columns:
                kept = [r for r in rows[1:] if r and int(r[0]) <= start_iteration]
        if kept:  # resumed: the step schedule continues after the last kept evaluation
            self._last_steps = int(kept[-1][1])
        with self.path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(self.columns)
            writer.writerows(kept)


def _format(value: float | int) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    return str(value)
