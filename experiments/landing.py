"""What every time-to-land run shares: the landing rule, the reference evaluation episodes, a run's record.

Evaluation episodes are ``adr_core``'s (``evaluation.settings.evaluate`` / ``rollout`` on the reference engine with
the evaluation seed stream), so this project's runs, whose trainer evaluates itself (``evaluate_every_steps``), and
stable-baselines3's, evaluated by a callback, start from the same initial states.
"""
from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ENV_ID = "adr/LunarLander-v0"
LANDED = 200.0  # mean return of the evaluation episodes (gymnasium's "solved" threshold)
SOLVED_SHARE = 0.9  # the robot envs (no return threshold): solved share of the evaluation episodes
CURVE_SEED, FINAL_SEED = 0, 1  # evaluation seed streams: learning-curve points, final evaluation


def evaluate_callable(policy: Callable[[np.ndarray], np.ndarray], episodes: int, seed: int,
                      env=None) -> dict[str, float]:
    """Deterministic reference episodes of any ``obs -> action`` callable (the same episodes ``evaluate`` plays)."""
    from adr_core.envs import make_env
    from adr_core.evaluation.episodes import EVALUATION_ITERATION, EVALUATION_KIND
    from adr_core.rollout import rollout

    env = env if env is not None else make_env(ENV_ID)
    space = env.unwrapped.randomization_space
    returns, solved = [], []
    for episode in range(episodes):
        t = rollout(env, policy, params=space.reference(), params_normalized=space.reference_normalized(),
                    kind=EVALUATION_KIND, iteration=EVALUATION_ITERATION, slot=episode, run_seed=seed)
        returns.append(t.episode_return)
        solved.append(t.solved)
    return {"return_mean": float(np.mean(returns)), "solved_fraction": float(np.mean(solved))}


def passes(point: dict[str, Any], env_id: str = ENV_ID) -> bool:
    """An evaluation that counts as landed (LunarLander: mean return >= 200) or solved (the robot envs: >= 90 % of
    its episodes meet the env's final-distance rule)."""
    return bool(point["return_mean"] >= LANDED if env_id == ENV_ID else point["solved"] >= SOLVED_SHARE)


def first_landing(curve: list[dict[str, Any]], env_id: str = ENV_ID) -> dict[str, Any] | None:
    """The first evaluation that passes (``passes``), or None."""
    return next((point for point in curve if passes(point, env_id)), None)


def curve_from_evaluation_csv(path: Path) -> list[dict[str, Any]]:
    """The periodic evaluation's rows (``evaluation.csv`` of a run with ``evaluate_settings: [reference]``)."""
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [{"agent_steps": int(r["agent_steps"]), "train_s": float(r["wall_time_s"]),
             "evaluation_s": float(r["evaluation_s"]), "return_mean": float(r["reference_return_mean"]),
             "solved": float(r["reference_solved_fraction"])} for r in rows]
