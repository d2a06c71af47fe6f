"""The best policy a run's periodic evaluation has seen, kept beside its checkpoints (``checkpoints/best.pt``).

Off-policy learners on the pushing tasks swing: an ErgoPusher run passed 90 % of a 20-episode evaluation at 711k agent
steps and ended at 67 % after 1M. As stable-baselines3's ``EvalCallback`` keeps a best model, every run with a
periodic evaluation (``evaluate_every`` / ``evaluate_every_steps``) writes the actor of each evaluation that beats the
best so far: the higher share solved at the reference setting, ties broken by the higher mean return (a task without
a solved criterion: the return alone). The file is a policy checkpoint (the run's identity, the actor, the iteration,
the config, the evaluation row): ``adr-evaluate``, ``adr-export`` and ``deploy_real checkpoint:=`` take it as they take
``latest.pt``. A resumed run reads the best score so far from the file itself.

The choice is made on the periodic evaluation's own episodes (its seeds, few episodes): judge the kept policy on
fresh episodes (``adr-evaluate``) before trusting its number.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from ..base.checkpoint import CheckpointError, load_checkpoint, save_checkpoint

BEST_POLICY = "best.pt"
SCORE_KEYS = ("reference_solved_fraction", "reference_return_mean")


def score(row: Mapping[str, Any]) -> tuple[float, ...]:
    """An evaluation row's rank: (solved share, mean return) at the reference setting; a missing or NaN value ranks
    lowest."""
    values = []
    for key in SCORE_KEYS:
        value = float(row.get(key, math.nan))
        values.append(-math.inf if math.isnan(value) else value)
    return tuple(values)


class BestPolicy:
    """Writes ``path`` whenever ``offer`` is given an evaluation that ranks above the best so far."""

    def __init__(self, path: Path, identity: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        self.path, self.identity, self.config = path, dict(identity), dict(config)
        self.best: tuple[float, ...] | None = None
        if path.is_file():
            try:
                self.best = tuple(float(v) for v in load_checkpoint(path, map_location="cpu")["best_score"])
            except (CheckpointError, KeyError, TypeError, ValueError):
                self.best = None  # unreadable: the next evaluation replaces it

    def offer(self, row: Mapping[str, Any], actor: Mapping[str, torch.Tensor]) -> bool:
        """Keep ``actor`` if ``row`` (its periodic evaluation) ranks above the best so far; whether it did."""
        rank = score(row)
        if self.best is not None and rank <= self.best:
            return False
        payload = {**self.identity, "agent": {"actor": {k: v.detach().cpu().clone() for k, v in actor.items()}},
                   "iteration": int(row["iteration"]), "agent_steps": int(row["agent_steps"]),  # evaluation.csv's
                   "config": self.config, "evaluation": {k: float(v) for k, v in row.items()},
                   "best_score": list(rank)}
        save_checkpoint(self.path, payload)
        self.best = rank
        return True
