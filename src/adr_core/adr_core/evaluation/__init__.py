"""Evaluation and inspection of trained policies and runs (ROS-free; docs/evaluation.md).

- ``load_policy(run_dir_or_checkpoint)``: the actor of an adr-train or node-graph run;
- ``sweep(policy, grid)`` -> ``SweepResult`` (save/load as NPZ + CSV): the generalization sweep, in worker processes;
- ``evaluate(policy, env_id, settings, episodes)``: scores on named settings ("reference", "hard");
- ``PeriodicEvaluation``: the hook trainers call each iteration to record learning curves (evaluation.csv);
- ``build_report(run_dirs, out_dir)``: the paper's figures, a table and a one-page summary (``adr-report``).
"""
from .grids import SweepGrid, setting_points, sweep_grid
from .periodic import EVALUATION_FILE, PeriodicEvaluation
from .policies import TrainedPolicy, load_policy, snapshot_checkpoints
from .settings import SettingScore, evaluate
from .solved import SolvedCriterion, solved_criterion
from .sweep import SweepResult, sweep

__all__ = ["EVALUATION_FILE", "PeriodicEvaluation", "SettingScore", "SolvedCriterion", "SweepGrid", "SweepResult",
           "TrainedPolicy", "evaluate", "load_policy", "setting_points", "snapshot_checkpoints", "solved_criterion",
           "sweep", "sweep_grid"]
