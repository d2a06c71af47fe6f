"""N SVPG particles as one module: A2C actor-critics (2x100 tanh, orthogonal init) with stacked weights.

Every weight has a leading particle dimension, so one ``baddbmm`` runs a layer for all particles; the
gradient of the sum of the particles' objectives w.r.t. a stacked weight holds each particle's own gradient.
Actor: state -> diagonal Gaussian (mean head, state-independent log std). Critic: state -> value.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn


def _stacked_linear(n: int, fan_in: int, fan_out: int, gain: float, generator: torch.Generator
                    ) -> tuple[nn.Parameter, nn.Parameter]:
    """(n, fan_in, fan_out) weights, each slice orthogonal as an ``nn.Linear`` weight would be; zero biases."""
    weight = torch.empty(n, fan_in, fan_out)
    for i in range(n):  # init only
        linear_layout = torch.empty(fan_out, fan_in)
        nn.init.orthogonal_(linear_layout, gain=gain, generator=generator)
        weight[i] = linear_layout.T
    return nn.Parameter(weight), nn.Parameter(torch.zeros(n, 1, fan_out))


def _layer(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.baddbmm(bias, x, weight)  # (n, B, in) @ (n, in, out) + (n, 1, out)


class ParticleEnsemble(nn.Module):
    HIDDEN_GAIN = math.sqrt(2.0)  # as in the SVPG / ADR code's orthogonal init

    def __init__(self, num_particles: int, state_dim: int, hidden_size: int, generator: torch.Generator) -> None:
        super().__init__()
        n, d, h = num_particles, state_dim, hidden_size
        self.num_particles, self.state_dim = n, d
        self.actor_w1, self.actor_b1 = _stacked_linear(n, d, h, self.HIDDEN_GAIN, generator)
        self.actor_w2, self.actor_b2 = _stacked_linear(n, h, h, self.HIDDEN_GAIN, generator)
        self.mean_w, self.mean_b = _stacked_linear(n, h, d, 1.0, generator)
        self.log_std = nn.Parameter(torch.zeros(n, 1, d))
        self.critic_w1, self.critic_b1 = _stacked_linear(n, d, h, self.HIDDEN_GAIN, generator)
        self.critic_w2, self.critic_b2 = _stacked_linear(n, h, h, self.HIDDEN_GAIN, generator)
        self.value_w, self.value_b = _stacked_linear(n, h, 1, 1.0, generator)

    def actor_parameters(self) -> list[nn.Parameter]:
        return [self.actor_w1, self.actor_b1, self.actor_w2, self.actor_b2, self.mean_w, self.mean_b, self.log_std]

    def critic_parameters(self) -> list[nn.Parameter]:
        return [self.critic_w1, self.critic_b1, self.critic_w2, self.critic_b2, self.value_w, self.value_b]

    def policy(self, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(n, B, d) -> Gaussian mean (n, B, d) and log std (n, 1, d)."""
        x = torch.tanh(_layer(states, self.actor_w1, self.actor_b1))
        x = torch.tanh(_layer(x, self.actor_w2, self.actor_b2))
        return _layer(x, self.mean_w, self.mean_b), self.log_std

    def value(self, states: torch.Tensor) -> torch.Tensor:
        """(n, B, d) -> (n, B)."""
        x = torch.tanh(_layer(states, self.critic_w1, self.critic_b1))
        x = torch.tanh(_layer(x, self.critic_w2, self.critic_b2))
        return _layer(x, self.value_w, self.value_b).squeeze(-1)


def flatten_per_particle(tensors: list[torch.Tensor]) -> torch.Tensor:
    """[(n, ...)] -> (n, P): each particle's tensors concatenated in order."""
    return torch.cat([t.reshape(t.shape[0], -1) for t in tensors], dim=1)


def unflatten_per_particle(flat: torch.Tensor, like: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    sizes = [t[0].numel() for t in like]
    chunks = flat.split(sizes, dim=1)  # type: ignore[no-untyped-call]  # torch's Tensor.split is unannotated
    return [chunk.reshape(t.shape) for chunk, t in zip(chunks, like)]


def gaussian_log_prob(actions: torch.Tensor, mean: torch.Tensor, log_std: torch.Tensor) -> torch.Tensor:
    """Diagonal Gaussian log density, summed over the last dimension."""
    z = (actions - mean) * torch.exp(-log_std)
    return (-0.5 * z.square() - log_std - 0.5 * math.log(2.0 * math.pi)).sum(dim=-1)
