"""Scores of a policy on named settings (``reference``, ``hard``, ...): what learning curves are made of.

``evaluate`` is usable from either trainer: pass the actor weights (``agent.actor_state_dict()``), an
``ActorPolicy`` or a ``TrainedPolicy``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Union

import numpy as np
import torch

from ..agents.networks import ActorPolicy
from ..randomization import RandomizationSpace, space_of
from .episodes import PolicySpec
from .grids import default_settings, setting_points
from .points import PointOutcomes, PointsRequest, evaluate_points
from .policies import TrainedPolicy

PolicyLike = Union[TrainedPolicy, ActorPolicy, Mapping[str, torch.Tensor]]
Settings = Union[Sequence[str], Mapping[str, np.ndarray]]
SCORE_FIELDS = ("return_mean", "return_std", "solved_fraction", "final_distance_mean")


@dataclass(frozen=True)
class SettingScore:
    name: str
    points: np.ndarray  # (m, d) physical
    outcomes: PointOutcomes  # (m, seeds, episodes)

    def summary(self) -> dict[str, float]:
        o = self.outcomes
        distances = o.final_distance[~np.isnan(o.final_distance)]
        return {"return_mean": float(o.returns.mean()), "return_std": float(o.returns.std()),
                "solved_fraction": float(o.solved.mean()),
                "final_distance_mean": float(distances.mean()) if distances.size else float("nan")}


def actor_weights_of(policy: PolicyLike) -> dict[str, np.ndarray]:
    if isinstance(policy, TrainedPolicy):
        return policy.numpy_weights()
    state = policy.actor.state_dict() if isinstance(policy, ActorPolicy) else policy
    return {name: tensor.detach().to("cpu", torch.float32).numpy().copy() for name, tensor in state.items()}


def resolve_settings(env_id: str, settings: Settings | None, per_dim: int = 3,
                     space: RandomizationSpace | None = None) -> dict[str, np.ndarray]:
    """Names -> points (``grids.setting_points``) of ``space`` (default: the env's packaged one); explicit
    ``{name: (m, d) physical points}`` are validated."""
    space = space_of(env_id, space)
    if settings is None:
        settings = default_settings(space)
    if isinstance(settings, Mapping):
        return {name: space.validate(np.atleast_2d(np.asarray(points, dtype=np.float64)))
                for name, points in settings.items()}
    return {name: setting_points(space, name, per_dim) for name in settings}


def evaluate(policy: PolicyLike, env_id: str, settings: Settings | None = None, episodes: int = 5,
             seeds: Sequence[int] = (0,), *, max_episode_steps: int | None = None, workers: int | None = 1,
             per_dim: int = 3, space: RandomizationSpace | None = None) -> dict[str, SettingScore]:
    """Deterministic episodes of ``policy`` on each setting. ``settings``: names (``"reference"``, a named range of
    the space such as ``"hard"``; default both) or explicit points. In this process by default (``workers=1``).
    ``space``: the envs' randomization space; default the packaged one, or a trained policy's own if its run named
    one (``space:`` in the run config)."""
    if space is None and isinstance(policy, TrainedPolicy):
        space = policy.run_space
    points = resolve_settings(env_id, settings, per_dim, space)
    if max_episode_steps is None and isinstance(policy, TrainedPolicy):
        max_episode_steps = policy.max_episode_steps
    specs = {"policy": PolicySpec(env_id, actor_weights_of(policy), max_episode_steps, space=space)}
    requests = [PointsRequest("policy", p, tuple(int(s) for s in seeds), episodes) for p in points.values()]
    outcomes = evaluate_points(specs, requests, workers)
    return {name: SettingScore(name, p, o) for (name, p), o in zip(points.items(), outcomes)}


def flat_scores(scores: Mapping[str, SettingScore]) -> dict[str, float]:
    """``{"<setting>_return_mean": ..., ...}`` for CSV rows and metric topics."""
    return {f"{name}_{key}": value for name, score in scores.items() for key, value in score.summary().items()}
