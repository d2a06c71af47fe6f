"""Samplers of environment parameters behind one interface (``base.Sampler``): ADR (SVPG), UDR, baseline, fixed
range."""

from __future__ import annotations

from ..randomization import RandomizationSpace
from .base import Sampler, SamplerError
from .simple import FixedRangeSampler, ReferenceSampler, UniformSampler
from .svpg import SVPGConfig, SVPGSampler

SAMPLER_KINDS = ("adr", "udr", "baseline", "fixed")


def make_sampler(kind: str, space: RandomizationSpace, svpg: SVPGConfig, seed: int,
                 fixed_range: str = "hard") -> Sampler:
    """``svpg.num_particles * svpg.rollout_length`` proposals per iteration for every kind (same agent data rate)."""
    if svpg.num_particles is None:
        raise SamplerError("resolve svpg.num_particles before building a sampler")
    n = svpg.num_particles * svpg.rollout_length
    if kind == "adr":
        return SVPGSampler(space.ndim, svpg, seed)
    if kind == "udr":
        return UniformSampler(space, n, seed)
    if kind == "baseline":
        return ReferenceSampler(space, n, seed)
    if kind == "fixed":
        return FixedRangeSampler(space, fixed_range, n, seed)
    raise SamplerError(f"unknown sampler {kind!r}; choose one of {SAMPLER_KINDS}")


__all__ = ["FixedRangeSampler", "ReferenceSampler", "SAMPLER_KINDS", "Sampler", "SamplerError", "SVPGConfig",
           "SVPGSampler", "UniformSampler", "make_sampler"]
