"""Stein variational policy gradient direction (paper eq. (2)) with an RBF kernel and the median heuristic.

For particles x_1..x_N (flattened policy parameters) with policy gradients g_j = grad J(x_j)::

    phi(x_i) = 1/N * sum_j [ k(x_j, x_i) g_j + alpha * grad_{x_j} k(x_j, x_i) ]
    k(x, y)  = exp(-||x - y||^2 / (2 h^2)),   grad_{x_j} k(x_j, x_i) = k(x_j, x_i) (x_i - x_j) / h^2
    h        = sqrt(0.5 * median(||x_i - x_j||^2) / log(N + 1))   (median over all N^2 pairs, as in SVGD/SVPG code)

``phi`` is an ascent direction: the first term pulls particles up the reward, the second pushes them apart.
"""
from __future__ import annotations

import math

import torch


def squared_distances(x: torch.Tensor) -> torch.Tensor:
    """(N, P) -> (N, N) pairwise squared Euclidean distances (Gram form in float64: fast and accurate)."""
    x64 = x.double()
    sq_norms = x64.square().sum(dim=1)
    sq = (sq_norms[:, None] + sq_norms[None, :] - 2.0 * (x64 @ x64.T)).clamp_min(0.0)
    return sq.fill_diagonal_(0.0).to(x.dtype)


def median_bandwidth(sq_dists: torch.Tensor) -> torch.Tensor:
    """The median heuristic of SVGD: ``h = sqrt(0.5 * median / log(N + 1))``; numpy-style median (mean of middles)."""
    n = sq_dists.shape[0]
    median = torch.quantile(sq_dists.reshape(-1).double(), 0.5).to(sq_dists.dtype)
    return torch.sqrt(0.5 * median / math.log(n + 1)).clamp_min(1e-12)


def rbf_kernel(sq_dists: torch.Tensor, bandwidth: torch.Tensor) -> torch.Tensor:
    return torch.exp(-sq_dists / (2.0 * bandwidth.square()))


def stein_direction(params: torch.Tensor, grads: torch.Tensor, temperature: float
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Eq. (2) for all particles at once. Returns (phi (N, P), kernel (N, N), bandwidth)."""
    n = params.shape[0]
    sq_dists = squared_distances(params)
    h = median_bandwidth(sq_dists)
    kernel = rbf_kernel(sq_dists, h)  # symmetric: kernel[j, i] = k(x_j, x_i)
    driving = kernel @ grads
    repulsive = (params * kernel.sum(dim=1, keepdim=True) - kernel @ params) / h.square()
    return (driving + temperature * repulsive) / n, kernel, h
