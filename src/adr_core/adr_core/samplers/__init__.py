"""Samplers of environment parameters behind one interface (``base.Sampler``): ADR (SVPG), UDR, baseline, fixed
range."""

from __future__ import annotations

from ..randomization import RandomizationSpace
from .base import Sampler, SamplerError
from .simple import FixedRangeSampler, ReferenceSampler, UniformSampler
from .svpg import SVPGConfig, SVPGSampler

SAMPLER_KINDS = ("adr", "udr", "baseline", "fixed")
# The paper's methods by the names users pick (launch ``method:=``, the claims grid) -> the sampler kind that runs them,
# and the label figures and tables give them. Written here once.
METHOD_SAMPLERS = {"adr": "adr", "udr": "udr", "baseline": "baseline", "oracle": "fixed"}
METHOD_LABELS = {"adr": "ADR", "udr": "UDR", "baseline": "baseline", "oracle": "oracle"}


def method_of(sampler: str) -> str:
    """The method name of a sampler kind (``fixed`` -> ``oracle``); other kinds keep their own name."""
    return {kind: method for method, kind in METHOD_SAMPLERS.items()}.get(sampler, sampler)


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


__all__ = ["FixedRangeSampler", "METHOD_LABELS", "METHOD_SAMPLERS", "ReferenceSampler", "SAMPLER_KINDS", "Sampler",
           "SamplerError", "SVPGConfig", "SVPGSampler", "UniformSampler", "make_sampler", "method_of"]
