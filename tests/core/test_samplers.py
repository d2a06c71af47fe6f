"""The non-learning samplers and the sampler factory, on the packaged spaces."""
from __future__ import annotations

import numpy as np
import pytest

from adr_core.randomization import load_space
from adr_core.samplers import SamplerError, SVPGConfig, SVPGSampler, make_sampler


@pytest.fixture(scope="module")
def pusher():
    return load_space("adr/Pusher3DOF-v0")


def test_udr_is_uniform_over_the_training_range(pusher):
    sampler = make_sampler("udr", pusher, SVPGConfig(num_particles=15), seed=0)
    points = np.concatenate([sampler.propose() for _ in range(200)])
    assert points.shape == (3000, pusher.ndim)
    assert points.min() >= 0.0 and points.max() <= 1.0
    np.testing.assert_allclose(points.mean(0), 0.5, atol=0.02)
    np.testing.assert_allclose(points.var(0), 1 / 12, atol=0.005)


def test_baseline_proposes_only_the_reference(pusher):
    sampler = make_sampler("baseline", pusher, SVPGConfig(num_particles=4, rollout_length=2), seed=0)
    points = sampler.propose()
    assert points.shape == (8, pusher.ndim)
    np.testing.assert_allclose(pusher.from_normalized(points), np.tile(pusher.reference(), (8, 1)))


def test_fixed_range_stays_inside_the_named_range(pusher):
    sampler = make_sampler("fixed", pusher, SVPGConfig(num_particles=15), seed=0, fixed_range="hard")
    physical = pusher.from_normalized(np.concatenate([sampler.propose() for _ in range(50)]))
    low, high = pusher.range_box("hard")
    assert (physical >= low - 1e-12).all() and (physical <= high + 1e-12).all()
    assert (physical.max(0) - physical.min(0) > 0.9 * (high - low)).all()  # covers the range


def test_lunar_lander_oracle_range_is_the_papers(tmp_path):
    space = load_space("adr/LunarLander-v0")
    sampler = make_sampler("fixed", space, SVPGConfig(num_particles=10), seed=1, fixed_range="hard")
    engine = space.from_normalized(sampler.propose())[:, 0]
    assert engine.min() >= 8.0 and engine.max() <= 11.0


def test_samplers_round_trip_their_state_and_reject_a_foreign_one(pusher):
    a = make_sampler("udr", pusher, SVPGConfig(num_particles=3), seed=5)
    a.propose()
    b = make_sampler("udr", pusher, SVPGConfig(num_particles=3), seed=6)
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(a.propose(), b.propose())
    with pytest.raises(SamplerError, match="'udr'"):
        SVPGSampler(pusher.ndim, SVPGConfig(num_particles=3), seed=0).load_state_dict(a.state_dict())


def test_factory_checks_its_arguments(pusher):
    with pytest.raises(SamplerError, match="unknown sampler"):
        make_sampler("bayesopt", pusher, SVPGConfig(num_particles=3), seed=0)
    with pytest.raises(SamplerError, match="num_particles"):
        make_sampler("adr", pusher, SVPGConfig(), seed=0)
    with pytest.raises(ValueError, match="unknown range"):
        make_sampler("fixed", pusher, SVPGConfig(num_particles=3), seed=0, fixed_range="nope")
