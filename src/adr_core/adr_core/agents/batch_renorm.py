"""Batch Renormalization (Ioffe, NeurIPS 2017) for an ensemble of critics, and CrossQ's critic built from it.

``EnsembleBatchRenorm`` normalizes each member's features over the batch (inputs ``(members, B, features)``).
Training mode::

    mu, var = mean and unbiased variance of the batch         (per member and feature)
    sigma   = sqrt(var + eps);  sigma_run = sqrt(running_var + eps)
    r       = clamp(sigma / sigma_run, 1/rmax, rmax)           detached;  1 during the warm-up
    d       = clamp((mu - running_mean) / sigma_run, +-dmax)   detached;  0 during the warm-up
    (warm-up: while ``steps``, the training-mode passes before this one, is <= ``warmup_steps``)
    y       = scale * ((x - mu) / sigma * r + d) + bias
    running_mean += momentum * (mu - running_mean);  running_var += momentum * (var - running_var);  steps += 1

Eval mode: ``y = scale * (x - running_mean) / sqrt(running_var + eps) + bias``; nothing is updated. The warm-up
(the first ``warmup_steps + 1`` passes, as sb3-contrib counts) is plain batch normalization; after it,
renormalization with fixed rmax 3 and dmax 5.

Ported from sb3-contrib's ``BatchRenorm`` (``sb3_contrib/common/torch_layers.py``, MIT licence, Stable-Baselines
Team; itself adapted from araffin/sbx): the same defaults (momentum 0.01, eps 0.001, warm-up 100k forward passes in
training mode, then rmax 3 and dmax 5 at once), the same unbiased batch variance in the running statistics.
Deviations: (1) after the warm-up ``y`` is Ioffe's ``(x - mu) / sigma * r + d`` (sb3-contrib folds r and d into a
mean and a variance, which puts eps in other places: a difference of order eps; the warm-up's output is the same);
(2) the warm-up switch is a tensor ``where``, not a Python ``if`` on the step counter, so a CUDA step does not wait
for the device; (3) one layer normalizes every member of an ensemble (per member statistics and affine parameters),
where sb3-contrib has one layer per critic network. Ioffe's paper relaxes rmax from 1 to 3 and dmax from 0 to 5
gradually after 5k steps of plain normalization; neither sb3-contrib nor the CrossQ authors' code does, nor does this.

The running statistics and the step counter are buffers: checkpoints carry them, optimizers leave them alone.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F

from .networks import PAPER_HIDDEN_SIZES, EnsembleCritic

RENORM_RMAX, RENORM_DMAX = 3.0, 5.0  # sb3-contrib's and the CrossQ authors' limits after the warm-up
RENORM_EPS = 1e-3  # sb3-contrib's (and flax's) eps


class EnsembleBatchRenorm(nn.Module):
    """Batch renormalization of ``(members, B, features)`` inputs, statistics per member and feature."""

    running_mean: torch.Tensor
    running_var: torch.Tensor
    steps: torch.Tensor

    def __init__(self, members: int, features: int, momentum: float = 0.01, warmup_steps: int = 100_000,
                 eps: float = RENORM_EPS) -> None:
        super().__init__()
        shape = (int(members), 1, int(features))
        self.scale = nn.Parameter(torch.ones(shape))
        self.bias = nn.Parameter(torch.zeros(shape))
        self.register_buffer("running_mean", torch.zeros(shape))
        self.register_buffer("running_var", torch.ones(shape))
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))  # training-mode forward passes so far
        self.momentum, self.warmup_steps, self.eps = float(momentum), int(warmup_steps), float(eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            normalized = (x - self.running_mean) / (self.running_var + self.eps).sqrt()
            return torch.addcmul(self.bias, self.scale, normalized)
        mean, var = x.mean(1, keepdim=True), x.var(1, keepdim=True)
        std = (var + self.eps).sqrt()
        with torch.no_grad():
            running_std = (self.running_var + self.eps).sqrt()
            renorm = self.steps > self.warmup_steps
            r = torch.where(renorm, (std / running_std).clamp(1.0 / RENORM_RMAX, RENORM_RMAX), 1.0)
            d = torch.where(renorm, ((mean - self.running_mean) / running_std).clamp(-RENORM_DMAX, RENORM_DMAX), 0.0)
            self.running_mean.lerp_(mean, self.momentum)
            self.running_var.lerp_(var, self.momentum)
            self.steps += 1
        normalized = (x - mean) / std * r + d
        return torch.addcmul(self.bias, self.scale, normalized)

    def extra_repr(self) -> str:
        return f"features={self.scale.shape[-1]}, momentum={self.momentum}, warmup_steps={self.warmup_steps}"


class BatchRenormCritic(EnsembleCritic):
    """CrossQ's critics: an ``EnsembleCritic`` with a batch renormalization before every linear layer (the input,
    each hidden layer's ReLU output), as sb3-contrib's ``CrossQCritic`` (``create_mlp(pre_linear_modules=...)``)
    and the CrossQ authors' critic lay them out. Constructed in eval mode: whoever wants the statistics updated
    (CrossQ's joint forward pass) switches it to training mode for that call."""

    def __init__(self, obs_dim: int, act_dim: int, hidden_sizes: Sequence[int] = PAPER_HIDDEN_SIZES,
                 members: int = 2, normalize_observations: bool = False, momentum: float = 0.01,
                 warmup_steps: int = 100_000) -> None:
        super().__init__(obs_dim, act_dim, hidden_sizes, members, normalize_observations)
        widths = [int(obs_dim) + int(act_dim), *(int(h) for h in hidden_sizes)]
        self.norms = nn.ModuleList(EnsembleBatchRenorm(members, width, momentum, warmup_steps) for width in widths)
        self._norm_chain = tuple(self.norms)  # as EnsembleCritic's parameter tuple: no ModuleList indexing per call
        self.eval()

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        """(members, B, 1) values."""
        x = torch.cat([self.normalized(obs), action], dim=-1).expand(self.members, -1, -1)
        norms = self._norm_chain
        for norm, (weight, bias) in zip(norms, self._hidden):
            x = F.relu(torch.baddbmm(bias, norm(x), weight))
        weight, bias = self._last
        return torch.baddbmm(bias, norms[-1](x), weight)
