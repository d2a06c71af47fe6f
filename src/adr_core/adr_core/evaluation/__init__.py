"""Evaluation of trained policies: playing them (ROS-free; docs/evaluation.md). Reports over runs: ``adr_core.report``.

- ``load_policy(run_dir_or_checkpoint)``: the actor of an adr-train or node-graph run;
- ``sweep(policy, grid)`` -> ``SweepResult`` (save/load as NPZ + CSV): the generalization sweep, in worker processes;
- ``evaluate(policy, env_id, settings, episodes)``: scores on named settings ("reference", "hard");
- ``PeriodicEvaluation``: the hook trainers call each iteration to record learning curves (evaluation.csv);
- ``EarlyStop``'s checks and the episode engine every evaluation runs on (``episodes``, ``points``).

The names are imported on first use, so that ``adr_core.evaluation.solved`` (the solved criteria, which a
deployment without torch reads) does not pull in torch.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {"SweepGrid": "grids", "setting_points": "grids", "sweep_grid": "grids", "EVALUATION_FILE": "periodic",
          "PeriodicEvaluation": "periodic", "TrainedPolicy": "policies", "load_policy": "policies",
          "snapshot_checkpoints": "policies", "SettingScore": "settings", "evaluate": "settings",
          "SolvedCriterion": "solved", "solved_criterion": "solved", "SweepResult": "sweeps", "sweep": "sweeps"}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'adr_core.evaluation' has no attribute {name!r}")
    return getattr(import_module(f".{_WHERE[name]}", __name__), name)
