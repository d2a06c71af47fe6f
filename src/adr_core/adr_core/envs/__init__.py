"""The four randomized envs of the ADR paper, registered with gymnasium as ``adr/<Name>-v0`` on import.

Every env's ``unwrapped`` has ``randomization_space``, ``set_parameters``, ``parameters`` and
``is_solved``; see docs/environments.md.
"""
from __future__ import annotations

from typing import Any

import gymnasium

from ..randomization import RandomizationError

_SPECS: dict[str, dict[str, Any]] = {
    "adr/LunarLander-v0": dict(
        entry_point="adr_core.envs.lunar_lander:RandomizedLunarLander", max_episode_steps=1000, reward_threshold=200.0
    ),
    "adr/Pusher3DOF-v0": dict(entry_point="adr_core.envs.pusher3dof:Pusher3DOFEnv", max_episode_steps=100),
    "adr/ErgoReacher-v0": dict(entry_point="adr_core.envs.ergo_reacher:ErgoReacherEnv", max_episode_steps=100),
    "adr/ErgoPusher-v0": dict(entry_point="adr_core.envs.ergo_pusher:ErgoPusherEnv", max_episode_steps=100),
}

ENV_IDS: tuple[str, ...] = tuple(_SPECS)

# The paper's number of SVPG particles per environment (appendix "Experiment Details": N = 10 for LunarLander,
# 15 for the other environments); ``svpg.num_particles: null`` resolves to this.
PAPER_PARTICLES: dict[str, int] = {"adr/LunarLander-v0": 10, "adr/Pusher3DOF-v0": 15, "adr/ErgoReacher-v0": 15,
                                   "adr/ErgoPusher-v0": 15}

for _env_id, _spec in _SPECS.items():
    if _env_id not in gymnasium.registry:
        gymnasium.register(id=_env_id, **_spec)


def make_env(env_id: str, **kwargs: Any) -> gymnasium.Env[Any, Any]:
    """``gymnasium.make`` of one of ``ENV_IDS`` (TimeLimit applied; the passive env checker off unless asked)."""
    if env_id not in ENV_IDS:
        raise RandomizationError(f"unknown env id {env_id!r}; known: {list(ENV_IDS)}")
    kwargs.setdefault("disable_env_checker", True)
    return gymnasium.make(env_id, **kwargs)


__all__ = ["ENV_IDS", "PAPER_PARTICLES", "make_env"]
