"""Replay buffer: one preallocated row-major float32 matrix, a ring, sampled with one ``randint`` call.

A row is ``[obs | action | reward | discount | next_obs]``; a batch is one ``index_select`` followed by
column views, so sampling costs one gather whatever the number of fields.

A row may be an n-step transition (``nstep_transitions``): ``reward`` is the discounted sum of up to n rewards,
``next_obs`` the observation n steps later and ``discount`` = gamma^m * (1 - terminated) for the m <= n steps
summed, so every agent's TD target is ``reward + discount * Q'(next_obs, .)``, whatever n.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

ROW_FORMAT = 2  # 1: [.. | not_done | ..] (before n-step returns); 2: [.. | discount | ..]


def nstep_transitions(rewards: np.ndarray, next_obs: np.ndarray, terminated: np.ndarray, gamma: float,
                      n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n-step targets of one episode: (returns (T,), next observations (T, obs_dim), discounts (T,)).

    For step t with m = min(n, T - t) steps left: return = sum_{k<m} gamma^k r_{t+k}, next = next_obs[t+m-1],
    discount = gamma^m * (1 - terminated[t+m-1]). n = 1 gives the usual (r, s', gamma * not_done).
    """
    if n < 1:
        raise ValueError(f"n-step needs n >= 1, got {n}")
    rewards = np.asarray(rewards, np.float64).reshape(-1)
    terminated = np.asarray(terminated, bool).reshape(-1)
    length = len(rewards)
    returns = np.zeros(length)
    for k in range(min(n, length)):
        returns[:length - k] += gamma ** k * rewards[k:]
    steps = np.minimum(n, length - np.arange(length))
    last = np.arange(length) + steps - 1
    discounts = np.where(terminated[last], 0.0, np.power(float(gamma), steps))
    return returns, np.asarray(next_obs)[last], discounts


@dataclass(frozen=True)
class Batch:
    obs: torch.Tensor  # (B, obs_dim)
    actions: torch.Tensor  # (B, act_dim)
    rewards: torch.Tensor  # (B, 1)
    discount: torch.Tensor  # (B, 1): gamma^m of the bootstrap; 0 where the episode terminated (not on truncation)
    next_obs: torch.Tensor  # (B, obs_dim)


class ReplayBuffer:
    def __init__(self, obs_dim: int, act_dim: int, capacity: int, device: torch.device | str = "cpu",
                 generator: torch.Generator | None = None) -> None:
        if capacity < 1:
            raise ValueError(f"replay capacity must be >= 1, got {capacity}")
        self.obs_dim, self.act_dim, self.capacity = int(obs_dim), int(act_dim), int(capacity)
        self.device = torch.device(device)
        self.generator = generator if generator is not None else torch.Generator()
        self.row_width = 2 * self.obs_dim + self.act_dim + 2
        self.storage = torch.zeros((self.capacity, self.row_width), dtype=torch.float32, device=self.device)
        self.position = 0  # next row to write
        self.size = 0
        a, o = self.act_dim, self.obs_dim
        self._slices = {"obs": slice(0, o), "actions": slice(o, o + a), "rewards": slice(o + a, o + a + 1),
                        "discount": slice(o + a + 1, o + a + 2), "next_obs": slice(o + a + 2, 2 * o + a + 2)}

    def __len__(self) -> int:
        return self.size

    def add(self, obs: np.ndarray, actions: np.ndarray, rewards: np.ndarray, next_obs: np.ndarray,
            discounts: np.ndarray) -> None:
        """Append T transitions (arrays with leading dimension T; ``discounts`` as from ``nstep_transitions``)."""
        rows = np.concatenate([
            np.asarray(obs, np.float32).reshape(-1, self.obs_dim),
            np.asarray(actions, np.float32).reshape(-1, self.act_dim),
            np.asarray(rewards, np.float32).reshape(-1, 1),
            np.asarray(discounts, np.float32).reshape(-1, 1),
            np.asarray(next_obs, np.float32).reshape(-1, self.obs_dim),
        ], axis=1)
        if len(rows) > self.capacity:  # only the newest rows can survive
            rows = rows[-self.capacity:]
        tensor = torch.from_numpy(rows).to(self.device)
        first = min(len(rows), self.capacity - self.position)
        self.storage[self.position:self.position + first] = tensor[:first]
        self.storage[:len(rows) - first] = tensor[first:]
        self.position = (self.position + len(rows)) % self.capacity
        self.size = min(self.size + len(rows), self.capacity)

    def sample(self, batch_size: int) -> Batch:
        """``batch_size`` rows drawn uniformly with replacement (as in TD3's and the ADR code's buffers)."""
        if self.size == 0:
            raise RuntimeError("cannot sample from an empty replay buffer")
        index = torch.randint(self.size, (batch_size,), generator=self.generator).to(self.device, non_blocking=True)
        rows = self.storage.index_select(0, index)
        return Batch(**{name: rows[:, cols] for name, cols in self._slices.items()})

    def observations(self) -> torch.Tensor:
        """The stored rows' observations (a view, (size, obs_dim))."""
        return self.storage[:self.size, self._slices["obs"]]

    def undo_point(self, upcoming: int) -> dict[str, Any]:
        """Position, size and the stored rows that the next ``upcoming`` added rows would overwrite (``rollback``)."""
        index = (self.position + torch.arange(min(max(0, int(upcoming)), self.capacity))) % self.capacity
        index = index[index < self.size].to(self.device)
        return {"position": self.position, "size": self.size, "index": index,
                "rows": self.storage.index_select(0, index).clone()}

    def rollback(self, point: dict[str, Any]) -> None:
        """Back to ``point`` (``undo_point``), provided at most the ``upcoming`` rows it was taken for were added."""
        self.storage.index_copy_(0, point["index"], point["rows"])
        self.position, self.size = int(point["position"]), int(point["size"])

    def state_dict(self) -> dict[str, Any]:
        return {"storage": self.storage[:self.size].cpu().clone(), "position": self.position, "size": self.size,
                "capacity": self.capacity, "row_width": self.row_width, "format": ROW_FORMAT}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("format") != ROW_FORMAT:
            raise ValueError(f"replay buffer rows of format {state.get('format', 1)} (a checkpoint of an older "
                             f"version, whose rows held not_done instead of the bootstrap discount); this version "
                             f"reads format {ROW_FORMAT}: start a new run")
        if state["capacity"] != self.capacity or state["row_width"] != self.row_width:
            raise ValueError(f"replay buffer mismatch: checkpoint capacity {state['capacity']} x {state['row_width']}, "
                             f"this buffer {self.capacity} x {self.row_width}")
        self.size, self.position = int(state["size"]), int(state["position"])
        self.storage.zero_()
        self.storage[:self.size] = state["storage"].to(self.device)
