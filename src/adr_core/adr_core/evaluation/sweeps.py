"""Generalization sweep: the deterministic policy over a grid of the randomization space; saved as CSV + NPZ.

Files written by ``SweepResult.save(directory)``:

- ``sweep.npz``: ``points (n, d)``, ``swept (n,)``, ``returns/final_distance/solved/lengths (n, seeds, episodes)``,
  ``seeds``, and the metadata as JSON (``meta``: env, names, grid kind and shape, episodes, solved criterion,
  checkpoint);
- ``sweep_points.csv``: one row per point: parameters, mean/std of return and final distance over all episodes, solved
  fraction, the solved criterion;
- ``sweep_episodes.csv``: one row per episode (point, seed, episode, return, final distance, solved, length).
"""
from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .episodes import PolicySpec
from .grids import SweepGrid, sweep_grid
from .points import PointOutcomes, PointsRequest, evaluate_points
from .policies import TrainedPolicy
from .solved import SolvedCriterion, solved_criterion

NPZ, POINTS_CSV, EPISODES_CSV = "sweep.npz", "sweep_points.csv", "sweep_episodes.csv"
RUN_SWEEP_DIR = "evaluation"  # adr-evaluate's default output inside a run directory (reused when it matches)
DEFAULT_EPISODES = 5  # per point and seed, as the published code's evaluation
DEFAULT_SEEDS = (0, 1, 2)


@dataclass(frozen=True)
class SweepResult:
    env_id: str
    grid: SweepGrid
    seeds: tuple[int, ...]
    episodes: int
    outcomes: PointOutcomes
    criterion: SolvedCriterion
    checkpoint: str = ""
    checkpoint_iteration: int = -1
    agent_steps: int = -1

    # ------------------------------------------------------------------ summaries (over seeds x episodes)
    def metric(self) -> np.ndarray:
        """``(n, seeds, episodes)`` values of the solved criterion's metric (return or final distance)."""
        return self.outcomes.returns if self.criterion.metric == "return" else self.outcomes.final_distance

    def mean(self) -> np.ndarray:
        means: np.ndarray = self.metric().reshape(len(self.grid), -1).mean(axis=1)
        return means

    def std(self) -> np.ndarray:
        stds: np.ndarray = self.metric().reshape(len(self.grid), -1).std(axis=1)
        return stds

    def solved_fraction(self) -> np.ndarray:
        fraction: np.ndarray = self.outcomes.solved.reshape(len(self.grid), -1).mean(axis=1)
        return fraction

    def indices_of(self, dimension: int) -> np.ndarray:
        """Points of the per-dimension sweep along ``dimension``, in increasing order of its value."""
        return np.flatnonzero(self.grid.swept == dimension)

    # ------------------------------------------------------------------ files
    def meta(self) -> dict[str, Any]:
        return {"env_id": self.env_id, "names": list(self.grid.names), "kind": self.grid.kind,
                "shape": list(self.grid.shape), "seeds": list(self.seeds), "episodes": self.episodes,
                "solved_metric": self.criterion.metric, "solved_threshold": self.criterion.threshold,
                "higher_is_better": self.criterion.higher_is_better, "checkpoint": self.checkpoint,
                "checkpoint_iteration": self.checkpoint_iteration, "agent_steps": self.agent_steps}

    def save(self, directory: str | Path) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        o = self.outcomes
        np.savez(directory / NPZ, points=self.grid.points, swept=self.grid.swept, seeds=np.array(self.seeds),
                 returns=o.returns, final_distance=o.final_distance, solved=o.solved, lengths=o.lengths,
                 mean=self.mean(), std=self.std(), solved_fraction=self.solved_fraction(),
                 solved_threshold=self.criterion.threshold, meta=json.dumps(self.meta()))
        self._write_points_csv(directory / POINTS_CSV)
        self._write_episodes_csv(directory / EPISODES_CSV)
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> SweepResult:
        path = Path(directory) / NPZ
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            grid = SweepGrid(meta["kind"], tuple(meta["names"]), data["points"], data["swept"], tuple(meta["shape"]))
            outcomes = PointOutcomes(data["returns"], data["final_distance"], data["solved"], data["lengths"])
        criterion = SolvedCriterion(meta["solved_metric"], float(meta["solved_threshold"]),
                                    bool(meta["higher_is_better"]))
        return cls(meta["env_id"], grid, tuple(meta["seeds"]), int(meta["episodes"]), outcomes, criterion,
                   meta["checkpoint"], int(meta["checkpoint_iteration"]), int(meta["agent_steps"]))

    def _write_points_csv(self, path: Path) -> None:
        o, n = self.outcomes, len(self.grid)
        returns, distances = o.returns.reshape(n, -1), o.final_distance.reshape(n, -1)
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["point", "swept", *self.grid.names, "episodes", "return_mean", "return_std",
                             "final_distance_mean", "final_distance_std", "solved_fraction", "solved_metric",
                             "solved_threshold"])
            for i in range(n):
                swept = "" if self.grid.swept[i] < 0 else self.grid.names[self.grid.swept[i]]
                writer.writerow([i, swept, *map(repr, map(float, self.grid.points[i])), returns.shape[1],
                                 repr(float(returns[i].mean())), repr(float(returns[i].std())),
                                 _nan_repr(distances[i].mean()), _nan_repr(distances[i].std()),
                                 repr(float(o.solved[i].mean())), self.criterion.metric, self.criterion.threshold])

    def _write_episodes_csv(self, path: Path) -> None:
        o = self.outcomes
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["point", *self.grid.names, "seed", "episode", "return", "final_distance", "solved",
                             "length"])
            for i, point in enumerate(self.grid.points):
                for s, seed in enumerate(self.seeds):
                    for e in range(self.episodes):
                        writer.writerow([i, *map(repr, map(float, point)), seed, e, repr(float(o.returns[i, s, e])),
                                         _nan_repr(o.final_distance[i, s, e]), int(o.solved[i, s, e]),
                                         int(o.lengths[i, s, e])])


def _nan_repr(value: float) -> str:
    return "" if np.isnan(value) else repr(float(value))


def policy_spec(policy: TrainedPolicy, max_episode_steps: int | None = None) -> PolicySpec:
    """Evaluate under the run's own episode limit unless told otherwise."""
    steps = max_episode_steps if max_episode_steps is not None else policy.max_episode_steps
    return PolicySpec(policy.env_id, policy.numpy_weights(), steps, space=policy.run_space)


def sweep_request(key: str, grid: SweepGrid, seeds: Sequence[int], episodes: int) -> PointsRequest:
    return PointsRequest(key, grid.points, tuple(int(s) for s in seeds), int(episodes))


def sweep_result(policy: TrainedPolicy, grid: SweepGrid, request: PointsRequest,
                 outcomes: PointOutcomes) -> SweepResult:
    return SweepResult(policy.env_id, grid, request.seeds, request.episodes, outcomes, solved_criterion(policy.env_id),
                       str(policy.path), policy.iteration, policy.agent_steps)


def sweep(policy: TrainedPolicy, grid: SweepGrid | None = None, *, episodes: int = DEFAULT_EPISODES,
          seeds: Sequence[int] = DEFAULT_SEEDS, workers: int | None = None, max_episode_steps: int | None = None,
          progress: Callable[[int, int], None] | None = None) -> SweepResult:
    """Sweep one policy (default grid: ``grids.sweep_grid(policy.space)``)."""
    grid = grid or sweep_grid(policy.space)
    request = sweep_request("policy", grid, seeds, episodes)
    (outcomes,) = evaluate_points({"policy": policy_spec(policy, max_episode_steps)}, [request], workers, progress)
    return sweep_result(policy, grid, request, outcomes)
