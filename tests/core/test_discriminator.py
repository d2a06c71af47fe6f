"""Discriminator rewarder: separates two synthetic transition distributions; reward definitions; state."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from adr_core.discriminator import DiscriminatorConfig, DiscriminatorRewarder
from adr_core.rollout import Trajectory

OBS, ACT = 3, 2


def synthetic(rng: np.random.Generator, kind: str, slot: int, length: int = 50) -> Trajectory:
    """Reference dynamics s' = s + a; randomized s' = s + 1.5 a (a 'stronger engine')."""
    obs = rng.normal(size=(length, OBS)).astype(np.float32)
    actions = rng.uniform(-1, 1, size=(length, ACT)).astype(np.float32)
    gain = 1.5 if kind == "randomized" else 1.0
    next_obs = obs.copy()
    next_obs[:, :ACT] += gain * actions
    return Trajectory(obs=obs, actions=actions, next_obs=next_obs, rewards=np.zeros(length, np.float32),
                      terminated=np.zeros(length, bool), params=np.array([gain]), params_normalized=np.array([0.5]),
                      kind=kind, iteration=0, slot=slot, policy_version=0, episode_return=0.0, length=length)


def test_learns_to_separate_randomized_from_reference_transitions():
    rng = np.random.default_rng(0)
    rand = [synthetic(rng, "randomized", i) for i in range(10)]
    ref = [synthetic(rng, "reference", i) for i in range(10)]
    disc = DiscriminatorRewarder(OBS, ACT, DiscriminatorConfig(learning_rate=2e-3), seed=0)
    before = disc.score(rand)
    np.testing.assert_allclose(before, math.log(0.5), atol=0.05)  # small output layer: D starts near 0.5
    losses = [disc.train(rand, ref, n_steps=150)["discriminator_loss"] for _ in range(4)]
    assert losses[-1] < 0.5 * losses[0]
    fresh_rand = [synthetic(rng, "randomized", i) for i in range(5)]
    fresh_ref = [synthetic(rng, "reference", i) for i in range(5)]
    assert disc.mean_probability(fresh_rand) > 0.8 > 0.2 > disc.mean_probability(fresh_ref)
    assert disc.score(fresh_rand).min() > disc.score(fresh_ref).max()


def test_reward_definitions_paper_and_published_code():
    rng = np.random.default_rng(1)
    traj = synthetic(rng, "randomized", 0)
    rewards = {}
    for definition in ("mean_log_d", "log_mean_d", "log_mean_d_minus_log_half"):
        disc = DiscriminatorRewarder(OBS, ACT, DiscriminatorConfig(reward=definition), seed=3)
        disc.train([traj], [synthetic(rng, "reference", 0)], n_steps=20)
        d = torch.sigmoid(disc.network(torch.from_numpy(traj.transitions()))).double()
        rewards[definition] = (disc.score([traj])[0], d)
    r, d = rewards["mean_log_d"]
    assert r == pytest.approx(torch.log(d).mean().item(), rel=1e-6)
    r, d = rewards["log_mean_d"]
    assert r == pytest.approx(math.log(d.mean().item()), rel=1e-6)
    r, d = rewards["log_mean_d_minus_log_half"]
    assert r == pytest.approx(math.log(d.mean().item()) - math.log(0.5), rel=1e-6)


def test_training_steps_default_to_one_per_randomized_transition():
    rng = np.random.default_rng(2)
    rand = [synthetic(rng, "randomized", 0, length=30), synthetic(rng, "randomized", 1, length=20)]
    disc = DiscriminatorRewarder(OBS, ACT, DiscriminatorConfig(steps_per_transition=0.5), seed=0)
    assert disc.steps_for(rand) == 25
    disc.train(rand, [synthetic(rng, "reference", 0)])
    assert disc.steps_done == 25


def test_state_round_trip_continues_identically_and_rejects_other_shapes():
    rng = np.random.default_rng(3)
    rand, ref = [synthetic(rng, "randomized", 0)], [synthetic(rng, "reference", 0)]
    a = DiscriminatorRewarder(OBS, ACT, DiscriminatorConfig(), seed=0)
    a.train(rand, ref, n_steps=5)
    b = DiscriminatorRewarder(OBS, ACT, DiscriminatorConfig(), seed=1)
    b.load_state_dict(a.state_dict())
    assert a.train(rand, ref, n_steps=5) == b.train(rand, ref, n_steps=5)
    np.testing.assert_array_equal(a.score(rand), b.score(rand))
    with pytest.raises(ValueError, match="inputs per transition"):
        DiscriminatorRewarder(OBS + 1, ACT, DiscriminatorConfig(), seed=0).load_state_dict(a.state_dict())


def compensated(rng: np.random.Generator, kind: str, slot: int, length: int = 50) -> Trajectory:
    """A policy that compensates a 1.5x stronger engine: it acts a / 1.5 there, so s' = s + a in both kinds.
    The dynamics (s, a, s') differ; the states reached do not."""
    t = synthetic(rng, "reference", slot, length)
    if kind == "randomized":
        t.actions = (t.actions / 1.5).astype(np.float32)
        t.kind = "randomized"
    return t


def test_state_inputs_see_outcomes_not_dynamics():
    rng = np.random.default_rng(4)
    rand = [compensated(rng, "randomized", i) for i in range(10)]
    ref = [compensated(rng, "reference", i) for i in range(10)]
    fresh_rand = [compensated(rng, "randomized", i) for i in range(5)]
    fresh_ref = [compensated(rng, "reference", i) for i in range(5)]
    by_input = {}
    for inputs in ("transition", "state"):
        disc = DiscriminatorRewarder(OBS, ACT, DiscriminatorConfig(learning_rate=2e-3, inputs=inputs), seed=0)
        assert disc.input_dim == (2 * OBS + ACT if inputs == "transition" else OBS)
        for _ in range(4):
            disc.train(rand, ref, n_steps=150)
        by_input[inputs] = disc.mean_probability(fresh_rand) - disc.mean_probability(fresh_ref)
    assert by_input["transition"] > 0.4  # the actions give the stronger engine away
    assert abs(by_input["state"]) < 0.1  # the same states: nothing to tell apart
    with pytest.raises(ValueError, match="discriminator.inputs must be one of"):
        DiscriminatorConfig(inputs="pixels")


def test_failure_bonus_adds_beta_to_each_unsolved_trajectory_and_nothing_when_off():
    """The failure-aware reward (issue 32, not the paper's): score + beta * (1 - solved); beta = 0 is the paper's."""
    import dataclasses

    rng = np.random.default_rng(3)
    solved = synthetic(rng, "randomized", 0)
    failed = dataclasses.replace(solved, slot=1, solved=False)
    solved = dataclasses.replace(solved, solved=True)
    paper = DiscriminatorRewarder(OBS, ACT, DiscriminatorConfig(), seed=0)
    aware = DiscriminatorRewarder(OBS, ACT, DiscriminatorConfig(failure_bonus=0.25), seed=0)
    base = paper.score([solved, failed])
    assert base[0] == base[1]  # the same transitions: the paper's score cannot tell success from failure
    np.testing.assert_array_equal(aware.score([solved, failed]), base + np.array([0.0, 0.25]))
    with pytest.raises(ValueError, match=r"failure_bonus must be in \[0, 100\]"):
        DiscriminatorConfig(failure_bonus=-1.0)
