"""Demonstration episodes for an off-policy agent (``agent.demonstrations``): a file of whole episodes recorded in the
env by any controller (a scripted one, a planner, teleoperation), kept in a replay buffer of their own and mixed into
every gradient step's batch at ``agent.demo_fraction`` (Nair et al. 2018, "Overcoming Exploration in Reinforcement
Learning with Demonstrations": a separate demonstration buffer for pushing with HER; Ball et al. 2023, RLPD: a fixed
share of each batch from the offline data). The episodes go through the same path as the agent's own (history,
shaping, n-step targets, relabelling), so a demonstration row is what the agent would have stored had it acted so.

File format (``numpy.savez``): ``obs``, ``actions``, ``next_obs`` (float32, episodes concatenated), ``rewards``
(float32), ``terminated`` (bool), ``lengths`` (int64, one per episode), ``env_id`` (str).
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

KEYS = ("obs", "actions", "next_obs", "rewards", "terminated", "lengths", "env_id")


class DemonstrationError(ValueError):
    """A demonstrations file that cannot be used, in one line."""


@dataclass(frozen=True)
class DemoEpisode:
    obs: np.ndarray  # (T, obs_dim)
    actions: np.ndarray  # (T, act_dim) in [-1, 1]
    next_obs: np.ndarray  # (T, obs_dim)
    rewards: np.ndarray  # (T,)
    terminated: np.ndarray  # (T,) bool


@dataclass(frozen=True)
class Demonstrations:
    env_id: str
    episodes: tuple[DemoEpisode, ...]
    digest: str  # sha256 of the arrays: a resumed run must read the same file

    @property
    def steps(self) -> int:
        return sum(len(e.rewards) for e in self.episodes)


def _digest(arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for key in KEYS:
        h.update(key.encode())
        h.update(np.ascontiguousarray(arrays[key]).tobytes())
    return h.hexdigest()


def save_demonstrations(path: str | Path, env_id: str, episodes: Sequence[DemoEpisode]) -> Path:
    """Write ``episodes`` of ``env_id`` to ``path`` (an .npz; numpy adds the suffix when missing)."""
    if not episodes:
        raise DemonstrationError("no demonstration episodes to save")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, obs=np.concatenate([e.obs for e in episodes]).astype(np.float32),
             actions=np.concatenate([e.actions for e in episodes]).astype(np.float32),
             next_obs=np.concatenate([e.next_obs for e in episodes]).astype(np.float32),
             rewards=np.concatenate([e.rewards for e in episodes]).astype(np.float32),
             terminated=np.concatenate([e.terminated for e in episodes]).astype(bool),
             lengths=np.array([len(e.rewards) for e in episodes], dtype=np.int64), env_id=np.array(env_id))
    return path if path.suffix == ".npz" else path.with_name(path.name + ".npz")


def load_demonstrations(path: str | Path, obs_dim: int, act_dim: int) -> Demonstrations:
    """The file's episodes, checked against the agent's observation and action sizes; DemonstrationError (one line,
    naming the file and what is wrong) otherwise."""
    path = Path(path)
    if not path.is_file():
        raise DemonstrationError(f"agent.demonstrations: no such file {path}")
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = [k for k in KEYS if k not in data.files]
            if missing:
                raise DemonstrationError(f"agent.demonstrations {path}: missing arrays {missing} (expected {KEYS})")
            arrays = {k: data[k] for k in KEYS}
    except (OSError, ValueError) as error:
        if isinstance(error, DemonstrationError):
            raise
        raise DemonstrationError(f"agent.demonstrations {path}: not a readable .npz ({error})") from None
    lengths = arrays["lengths"]
    total = int(lengths.sum()) if lengths.size else 0
    if lengths.ndim != 1 or lengths.size == 0 or (lengths < 1).any():
        raise DemonstrationError(f"agent.demonstrations {path}: 'lengths' must list one length >= 1 per episode")
    expected = {"obs": (total, obs_dim), "next_obs": (total, obs_dim), "actions": (total, act_dim),
                "rewards": (total,), "terminated": (total,)}
    for key, shape in expected.items():
        if arrays[key].shape != shape:
            raise DemonstrationError(f"agent.demonstrations {path}: '{key}' has shape {arrays[key].shape}, this "
                                     f"agent needs {shape} (observation {obs_dim}, action {act_dim}; another env?)")
    for key in ("obs", "next_obs", "actions", "rewards"):
        if not np.isfinite(arrays[key]).all():
            raise DemonstrationError(f"agent.demonstrations {path}: '{key}' holds NaN or infinite values")
    if np.abs(arrays["actions"]).max() > 1.0:
        raise DemonstrationError(f"agent.demonstrations {path}: actions outside [-1, 1] (the agent's action range)")
    ends = np.cumsum(lengths)
    episodes = tuple(
        DemoEpisode(obs=arrays["obs"][a:b].astype(np.float32), actions=arrays["actions"][a:b].astype(np.float32),
                    next_obs=arrays["next_obs"][a:b].astype(np.float32),
                    rewards=arrays["rewards"][a:b].astype(np.float32),
                    terminated=arrays["terminated"][a:b].astype(bool))
        for a, b in zip(np.concatenate([[0], ends[:-1]]), ends))
    return Demonstrations(env_id=str(arrays["env_id"]), episodes=episodes, digest=_digest(arrays))
