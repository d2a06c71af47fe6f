"""The evaluations a report needs, planned for all runs at once and run in one worker pool: per run, the final
policy's sweep and its scores on the named settings; and, for runs without an ``evaluation.csv``, the named-setting
scores of every kept checkpoint (learning curves)."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np

from ..base.checkpoint import CheckpointError
from ..evaluation.episodes import PolicySpec
from ..evaluation.grids import SweepGrid, default_settings, setting_points
from ..evaluation.points import PointOutcomes, PointsRequest, evaluate_points
from ..evaluation.policies import TrainedPolicy, load_policy, read_policy_file, snapshot_checkpoints
from ..evaluation.settings import SettingScore
from ..evaluation.sweeps import RUN_SWEEP_DIR, SweepResult, policy_spec, sweep_request, sweep_result
from .run_data import RunData


@dataclass(frozen=True)
class EvaluationOptions:
    episodes: int = 5  # per point and seed (published code: 5)
    seeds: tuple[int, ...] = (0, 1, 2)
    reference_episodes: int = 100  # at least this many at the reference setting, over ``seeds`` (the verdict line)
    curve_episodes: int = 5  # per setting point and seed, for each checkpoint of a learning curve
    curve_seeds: tuple[int, ...] = (0,)
    checkpoint_curves: bool = True
    max_checkpoints: int = 10
    workers: int | None = None


@dataclass
class RunEvaluation:
    run: RunData
    policy: TrainedPolicy | None
    problem: str = ""  # why the run was not evaluated
    sweep: SweepResult | None = None
    sweep_reused: bool = False
    scores: dict[str, SettingScore] = field(default_factory=dict)
    checkpoint_scores: list[tuple[int, dict[str, SettingScore]]] = field(default_factory=list)  # (agent steps, ...)


class _Batch:
    """Requests with what to do with their outcomes; all run in one ``evaluate_points`` call."""

    def __init__(self) -> None:
        self.specs: dict[str, PolicySpec] = {}
        self._items: list[tuple[PointsRequest, Callable[[PointOutcomes], None]]] = []

    def add(self, request: PointsRequest, on_done: Callable[[PointOutcomes], None]) -> None:
        self._items.append((request, on_done))

    def add_settings(self, key: str, settings: dict[str, np.ndarray], seeds: tuple[int, ...], episodes: int,
                     into: dict[str, SettingScore]) -> None:
        for name, points in settings.items():
            # cast: mypy cannot infer a lambda that binds loop variables as defaults
            self.add(PointsRequest(key, points, seeds, episodes),
                     cast("Callable[[PointOutcomes], None]",
                          lambda o, n=name, p=points: into.__setitem__(n, SettingScore(n, p, o))))

    def run(self, workers: int | None, progress: Callable[[int, int], None] | None) -> None:
        if not self._items:
            return
        outcomes = evaluate_points(self.specs, [request for request, _ in self._items], workers, progress)
        for (_, on_done), outcome in zip(self._items, outcomes):
            on_done(outcome)


def evaluate_runs(runs: Sequence[RunData], grid: SweepGrid, options: EvaluationOptions,
                  progress: Callable[[int, int], None] | None = None) -> list[RunEvaluation]:
    batch, evaluations = _Batch(), []
    for r, run in enumerate(runs):
        try:
            policy = load_policy(run.path)
        except CheckpointError as error:
            evaluations.append(RunEvaluation(run, None, str(error)))
            continue
        evaluation = RunEvaluation(run, policy)
        evaluations.append(evaluation)
        key = f"run{r}"
        batch.specs[key] = policy_spec(policy)
        settings = {name: setting_points(policy.space, name) for name in default_settings(policy.space)}
        saved = matching_saved_sweep(run.path / RUN_SWEEP_DIR, policy, grid, options)
        if saved is not None:
            evaluation.sweep, evaluation.sweep_reused = saved, True
        else:
            request = sweep_request(key, grid, options.seeds, options.episodes)
            batch.add(request, cast("Callable[[PointOutcomes], None]",  # a lambda binding loop variables
                                    lambda o, e=evaluation, p=policy, q=request: setattr(e, "sweep",
                                                                                         sweep_result(p, grid, q, o))))
        reference = {n: p for n, p in settings.items() if n == "reference"}
        per_seed = max(options.episodes, math.ceil(options.reference_episodes / len(options.seeds)))
        batch.add_settings(key, reference, options.seeds, per_seed, evaluation.scores)
        batch.add_settings(key, {n: p for n, p in settings.items() if n != "reference"}, options.seeds,
                           options.episodes, evaluation.scores)
        if run.evaluation is None and options.checkpoint_curves:
            for c, snapshot in enumerate(_curve_policies(run, policy, options.max_checkpoints)):
                snapshot_key = f"run{r}:checkpoint{c}"
                batch.specs[snapshot_key] = policy_spec(snapshot)
                scores: dict[str, SettingScore] = {}
                evaluation.checkpoint_scores.append((snapshot.agent_steps, scores))
                batch.add_settings(snapshot_key, settings, options.curve_seeds, options.curve_episodes, scores)
    batch.run(options.workers, progress)
    return evaluations


def methods_of(evaluations: Sequence[RunEvaluation]) -> dict[str, list[RunEvaluation]]:
    """Evaluations grouped by method, in the given order."""
    groups: dict[str, list[RunEvaluation]] = {}
    for evaluation in evaluations:
        groups.setdefault(evaluation.run.method, []).append(evaluation)
    return groups


def matching_saved_sweep(directory: Path, policy: TrainedPolicy, grid: SweepGrid,
                         options: EvaluationOptions) -> SweepResult | None:
    """A sweep saved by ``adr-evaluate`` for this very checkpoint, grid, seeds and episodes, else None."""
    try:
        saved = SweepResult.load(directory)
    except (OSError, KeyError, ValueError):
        return None
    same = (saved.checkpoint == str(policy.path) and saved.checkpoint_iteration == policy.iteration
            and saved.agent_steps == policy.agent_steps and saved.seeds == tuple(options.seeds)
            and saved.episodes == options.episodes and saved.grid.kind == grid.kind
            and saved.grid.points.shape == grid.points.shape and np.array_equal(saved.grid.points, grid.points))
    return saved if same else None


def _curve_policies(run: RunData, final: TrainedPolicy, limit: int) -> list[TrainedPolicy]:
    """Kept snapshots (evenly thinned to ``limit``) plus the final policy, by agent steps, without duplicates."""
    paths = snapshot_checkpoints(run.path)
    if len(paths) > limit - 1 > 0:
        paths = [paths[i] for i in np.linspace(0, len(paths) - 1, limit - 1).round().astype(int)]
    policies: dict[int, TrainedPolicy] = {}
    for path in paths:
        try:
            snapshot = read_policy_file(path)
        except CheckpointError:
            continue  # a damaged snapshot only costs one point of the curve
        policies[snapshot.agent_steps] = snapshot
    policies[final.agent_steps] = final
    return [policies[steps] for steps in sorted(policies)]
