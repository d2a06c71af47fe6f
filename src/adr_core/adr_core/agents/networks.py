"""The agent's networks (paper appendix: actor and critic, 400-300 ReLU).

Kept free of optimizers and replay so that a simulator process can rebuild the actor from plain weights
(``actor_from_state_dict``) and run it with ``ActorPolicy``.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

PAPER_HIDDEN_SIZES = (400, 300)


def _mlp_layers(in_dim: int, hidden_sizes: Sequence[int], out_dim: int) -> nn.ModuleList:
    sizes = [in_dim, *hidden_sizes, out_dim]
    return nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))


class Actor(nn.Module):
    """Deterministic policy ``obs -> tanh(...)`` with actions in [-1, 1] (paper: 'clip the max action ... [-1, 1]')."""

    def __init__(self, obs_dim: int, act_dim: int, hidden_sizes: Sequence[int] = PAPER_HIDDEN_SIZES) -> None:
        super().__init__()
        self.obs_dim, self.act_dim, self.hidden_sizes = int(obs_dim), int(act_dim), tuple(int(h) for h in hidden_sizes)
        self.layers = _mlp_layers(self.obs_dim, self.hidden_sizes, self.act_dim)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = obs
        for layer in self.layers[:-1]:
            x = F.relu(layer(x))
        return torch.tanh(self.layers[-1](x))


class Critic(nn.Module):
    """Q(s, a) on the concatenation [s, a]."""

    def __init__(self, obs_dim: int, act_dim: int, hidden_sizes: Sequence[int] = PAPER_HIDDEN_SIZES) -> None:
        super().__init__()
        self.layers = _mlp_layers(int(obs_dim) + int(act_dim), tuple(hidden_sizes), 1)

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        x = torch.cat([obs, action], dim=-1)
        for layer in self.layers[:-1]:
            x = F.relu(layer(x))
        return self.layers[-1](x)


class ActorStateError(ValueError):
    """Actor weights that do not describe an ``Actor``."""


def actor_from_state_dict(state: Mapping[str, torch.Tensor]) -> Actor:
    """Rebuild an ``Actor`` (on CPU, float32) from its ``state_dict``; the sizes are read from the weights."""
    weight_keys = sorted((k for k in state if k.startswith("layers.") and k.endswith(".weight")),
                         key=lambda k: int(k.split(".")[1]))
    if len(weight_keys) < 2:
        raise ActorStateError(f"actor weights need at least two 'layers.<i>.weight' entries, got keys {sorted(state)}")
    shapes = [tuple(state[k].shape) for k in weight_keys]
    for (out_a, _), (_, in_b) in zip(shapes[:-1], shapes[1:]):
        if out_a != in_b:
            raise ActorStateError(f"actor weight shapes do not chain: {shapes}")
    actor = Actor(obs_dim=shapes[0][1], act_dim=shapes[-1][0], hidden_sizes=[s[0] for s in shapes[:-1]])
    try:
        actor.load_state_dict({k: v.detach().to("cpu", torch.float32) for k, v in state.items()})
    except RuntimeError as exc:
        raise ActorStateError(f"actor weights do not match an Actor{shapes}: {exc}") from None
    return actor.eval()


class ActorPolicy:
    """A numpy-in, numpy-out deterministic policy around an ``Actor`` (what a simulator process runs)."""

    def __init__(self, actor: Actor) -> None:
        self.actor = actor.eval()

    @classmethod
    def from_state_dict(cls, state: Mapping[str, torch.Tensor]) -> "ActorPolicy":
        return cls(actor_from_state_dict(state))

    @torch.no_grad()
    def __call__(self, obs: np.ndarray) -> np.ndarray:
        x = torch.as_tensor(np.asarray(obs, dtype=np.float32))
        return self.actor(x).numpy()
