"""The four randomized envs of the ADR paper, registered with gymnasium as ``adr/<Name>-v0`` on import.

Every env's ``unwrapped`` has ``randomization_space``, ``set_parameters``, ``parameters`` and
``is_solved``; see docs/environments.md. What the stack knows of each env is its ``EnvRecord`` (registry.py);
another env registers its own with ``register_env``.
"""
from __future__ import annotations

from typing import Any

import gymnasium

from ..base.goal_layout import GoalLayout
from .registry import (
    ALLOW_VARIABLE,
    EnvRecord,
    SolvedCriterion,
    allow_env_modules,
    entry_modules,
    env_ids,
    env_record,
    import_env_modules,
    import_file_env_modules,
    register_env,
)

_ERGO_SOLVED = SolvedCriterion("final_distance", 0.025, False)  # m, tip (or puck) to goal at the end of an episode

# The paper's envs. Particles: appendix "Experiment Details" (N = 10 for LunarLander, 15 for the others). Reward
# bounds per step (adr_core.plausibility): LunarLander's crash/landing terms (+-100) plus shaping, so 1000; the robot
# envs reward minus a distance in metres minus a small control cost, so 100.
PAPER_ENVS: tuple[EnvRecord, ...] = (
    EnvRecord("adr/LunarLander-v0", "adr_core.envs.lunar_lander:RandomizedLunarLander", 1000,
              SolvedCriterion("return", 200.0, True), paper_particles=10, reward_bound_per_step=1000.0,
              reward_threshold=200.0, probe_controller="adr_core.probe.controllers:lunar_lander_heuristic"),
    EnvRecord("adr/Pusher3DOF-v0", "adr_core.envs.pusher3dof:Pusher3DOFEnv", 100,
              SolvedCriterion("final_distance", 0.25, False), paper_particles=15, reward_bound_per_step=100.0,
              goal_layout=GoalLayout(goal=(12, 14), achieved=(3, 5), effector=(10, 12),  # goal, puck, tip xy
                                     push_offset=0.075)),  # puck radius 0.05 + tip site 0.025
    EnvRecord("adr/ErgoReacher-v0", "adr_core.envs.ergo_reacher:ErgoReacherEnv", 100, _ERGO_SOLVED,
              paper_particles=15, reward_bound_per_step=100.0,
              probe_controller="adr_core.probe.controllers:ergo_reacher_controller"),
    EnvRecord("adr/ErgoPusher-v0", "adr_core.envs.ergo_pusher:ErgoPusherEnv", 100, _ERGO_SOLVED,
              paper_particles=15, reward_bound_per_step=100.0,
              goal_layout=GoalLayout(goal=(15, 17), achieved=(11, 13), effector=(8, 10),  # goal, puck, tip xy
                                     effector_height=(10, 0.011),  # tip z, the puck's centre height
                                     push_offset=0.03)),  # puck radius 0.02 + ~1 cm of tip
)
for _record in PAPER_ENVS:
    register_env(_record)

ENV_IDS: tuple[str, ...] = tuple(record.env_id for record in PAPER_ENVS)  # the paper's four; all: env_ids()


def make_env(env_id: str, **kwargs: Any) -> gymnasium.Env[Any, Any]:
    """``gymnasium.make`` of a registered env (TimeLimit applied; the passive env checker off unless asked)."""
    env_record(env_id)  # an unknown id: one line naming the known ones
    kwargs.setdefault("disable_env_checker", True)
    return gymnasium.make(env_id, **kwargs)


__all__ = ["ALLOW_VARIABLE", "ENV_IDS", "EnvRecord", "PAPER_ENVS", "SolvedCriterion", "allow_env_modules",
           "entry_modules", "env_ids", "env_record", "import_env_modules", "import_file_env_modules", "make_env",
           "register_env"]
