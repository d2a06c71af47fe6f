"""Samplers of environment parameters behind one interface (``base.Sampler``): ADR (SVPG), UDR, baseline, fixed
range, and boundary ADR (OpenAI 2019; beyond the paper)."""

from __future__ import annotations

from ..randomization import RandomizationSpace
from .base import Sampler, SamplerError
from .boundary import BoundaryConfig, BoundarySampler
from .simple import FixedRangeSampler, ReferenceSampler, UniformSampler
from .svpg import SVPGConfig, SVPGSampler

SAMPLER_KINDS = ("adr", "udr", "baseline", "fixed", "boundary_adr")
# The paper's methods by the names users pick (launch ``method:=``, the claims grid) -> the sampler kind that runs them,
# and the label figures and tables give them. Written here once.
PAPER_METHODS = ("adr", "udr", "baseline", "oracle")  # the paper's comparison (the claims grid's default)
METHOD_SAMPLERS = {"adr": "adr", "udr": "udr", "baseline": "baseline", "oracle": "fixed",
                   "boundary_adr": "boundary_adr"}
METHOD_LABELS = {"adr": "ADR", "udr": "UDR", "baseline": "baseline", "oracle": "oracle",
                 "boundary_adr": "boundary ADR"}


def method_of(sampler: str) -> str:
    """The method name of a sampler kind (``fixed`` -> ``oracle``); other kinds keep their own name."""
    return {kind: method for method, kind in METHOD_SAMPLERS.items()}.get(sampler, sampler)


def make_sampler(kind: str, space: RandomizationSpace, svpg: SVPGConfig, seed: int,
                 fixed_range: str = "hard", boundary: BoundaryConfig | None = None) -> Sampler:
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
    if kind == "boundary_adr":
        return BoundarySampler(space, boundary or BoundaryConfig(), n, seed)
    raise SamplerError(f"unknown sampler {kind!r}; choose one of {SAMPLER_KINDS}")


__all__ = ["BoundaryConfig", "BoundarySampler", "FixedRangeSampler", "METHOD_LABELS", "METHOD_SAMPLERS",
           "PAPER_METHODS", "ReferenceSampler", "SAMPLER_KINDS", "Sampler", "SamplerError", "SVPGConfig",
           "SVPGSampler", "UniformSampler", "make_sampler", "method_of"]
