"""Samplers of environment parameters behind one interface (``base.Sampler``), each known by its record
(``registry.SamplerRecord``): the paper's ADR (SVPG), UDR, baseline and fixed range ("oracle"), and beyond the paper
boundary ADR (OpenAI 2019), learnability sampling (Rutherford et al. 2024) and ALP-GMM (Portelas et al. 2019)."""

from __future__ import annotations

from typing import Any

from ..randomization import RandomizationSpace
from .alp_gmm import ALPGMMConfig, ALPGMMSampler
from .base import Sampler, SamplerError, feedback_path
from .boundary import BoundaryConfig, BoundarySampler, check_initial_range
from .learnability import LearnabilityConfig, LearnabilitySampler
from .registry import (
    SamplerBuild,
    SamplerRecord,
    build_options,
    import_sampler_modules,
    record_of_method,
    register_sampler,
    resolve_options,
    sampler_kinds,
    sampler_record,
    sampler_records,
)
from .simple import FixedRangeSampler, ReferenceSampler, UniformSampler
from .svpg import REWARD_LIMIT, SVPGConfig, SVPGSampler

BUILT_IN: tuple[SamplerRecord, ...] = (
    SamplerRecord("adr", SVPGSampler, lambda b: SVPGSampler(b.space.ndim, b.options, b.seed), "ADR",
                  "SVPG particles propose settings, rewarded by a discriminator that tells randomized from reference "
                  "trajectories (Mehta et al. 2019, the paper)", options=SVPGConfig, config_section="svpg",
                  metric_columns=SVPGSampler.METRICS, figure_columns=(), reward_limit=REWARD_LIMIT, paper=True),
    SamplerRecord("udr", UniformSampler, lambda b: UniformSampler(b.space, b.num_proposals, b.seed), "UDR",
                  "uniform over the training range (domain randomization)", paper=True),
    SamplerRecord("baseline", ReferenceSampler, lambda b: ReferenceSampler(b.space, b.num_proposals, b.seed),
                  "baseline", "the reference setting only", paper=True),
    SamplerRecord("fixed", FixedRangeSampler,
                  lambda b: FixedRangeSampler(b.space, b.fixed_range, b.num_proposals, b.seed), "oracle",
                  "uniform over the named range fixed_range of the space (the paper's hand-picked oracle)",
                  method="oracle", paper=True),
    SamplerRecord("boundary_adr", BoundarySampler,
                  lambda b: BoundarySampler(b.space, b.options, b.num_proposals, b.seed), "boundary ADR",
                  "per-dimension ranges that grow where the policy succeeds at their edge (OpenAI 2019), keys "
                  "boundary.*", options=BoundaryConfig, config_section="boundary",
                  metric_columns=BoundarySampler.METRICS, figure_columns=BoundarySampler.METRICS[:4],
                  check_space=check_initial_range),
    SamplerRecord("learnability", LearnabilitySampler,
                  lambda b: LearnabilitySampler(b.space, b.options, b.num_proposals, b.seed), "learnability",
                  "prefers settings where the policy sometimes succeeds: p(1-p) of the success rate measured nearby, "
                  "mixed with uniform (Rutherford et al. 2024, 'No Regrets'), keys sampler_options.*",
                  options=LearnabilityConfig, metric_columns=LearnabilitySampler.METRICS),
    SamplerRecord("alp_gmm", ALPGMMSampler,
                  lambda b: ALPGMMSampler(b.space, b.options, b.num_proposals, b.seed), "ALP-GMM",
                  "Gaussian mixtures over (setting, absolute learning progress), sampled where progress is made, "
                  "epsilon uniform (Portelas et al. 2019), keys sampler_options.*",
                  options=ALPGMMConfig, metric_columns=ALPGMMSampler.METRICS),
)
for _record in BUILT_IN:
    register_sampler(_record)

PAPER_METHODS = tuple(r.method_name for r in BUILT_IN if r.paper)  # the paper's comparison (the claims grid's default)


def method_samplers() -> dict[str, str]:
    """Method name users pick (launch ``method:=``, the claims grid) -> the sampler kind that runs it."""
    return {r.method_name: r.kind for r in sampler_records()}


def method_labels() -> dict[str, str]:
    """Method name -> the label figures and tables give it."""
    return {r.method_name: r.label for r in sampler_records()}


def method_of(sampler: str) -> str:
    """The method name of a sampler kind (``fixed`` -> ``oracle``); an unknown kind keeps its own name."""
    try:
        return sampler_record(sampler).method_name
    except SamplerError:
        return sampler


def make_sampler(kind: str, space: RandomizationSpace, svpg: SVPGConfig, seed: int, fixed_range: str = "hard",
                 options: Any = None) -> Sampler:
    """The sampler of ``kind`` outside a run config (tests, notebooks; a run's is ``TrainConfig.make_sampler``):
    ``svpg.num_particles * svpg.rollout_length`` proposals per iteration for every kind (the same agent data rate);
    ``options``: an instance of its record's ``options`` class (default: its defaults; ``svpg`` itself for ADR)."""
    if svpg.num_particles is None:
        raise SamplerError("resolve svpg.num_particles before building a sampler")
    record = sampler_record(kind)
    if options is None:
        options = svpg if isinstance(svpg, record.options or ()) else build_options(record, {})
    n = svpg.num_particles * svpg.rollout_length
    return record.build(SamplerBuild(space, n, int(seed), options, fixed_range))


__all__ = ["ALPGMMConfig", "ALPGMMSampler", "BUILT_IN", "BoundaryConfig", "BoundarySampler", "FixedRangeSampler",
           "LearnabilityConfig", "LearnabilitySampler", "PAPER_METHODS", "ReferenceSampler", "Sampler",
           "SamplerBuild", "SamplerError", "SamplerRecord", "SVPGConfig", "SVPGSampler", "UniformSampler",
           "build_options", "feedback_path", "import_sampler_modules", "make_sampler", "method_labels", "method_of",
           "method_samplers", "record_of_method", "register_sampler", "resolve_options", "sampler_kinds",
           "sampler_record", "sampler_records"]
