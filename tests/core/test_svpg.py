"""SVPG sampler: eq. (2) against a direct loop, vectorized gradients, moves, restarts, repulsion, reward seeking."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from adr_core.samplers.base import SamplerError
from adr_core.samplers.particles import flatten_per_particle, gaussian_log_prob
from adr_core.samplers.stein import median_bandwidth, rbf_kernel, squared_distances, stein_direction
from adr_core.samplers.svpg import SVPGConfig, SVPGSampler


def direct_eq2(x: np.ndarray, grads: np.ndarray, alpha: float) -> tuple[np.ndarray, float]:
    """Eq. (2) term by term, with the median heuristic written out as in the SVGD code."""
    n = len(x)
    sq = np.array([[np.sum((x[i] - x[j]) ** 2) for j in range(n)] for i in range(n)])
    h = math.sqrt(0.5 * np.median(sq) / math.log(n + 1))
    phi = np.zeros_like(x)
    for i in range(n):
        for j in range(n):
            k_ji = math.exp(-np.sum((x[j] - x[i]) ** 2) / (2 * h * h))
            grad_xj_k = k_ji * (x[i] - x[j]) / (h * h)  # d/dx_j of exp(-|x_j - x_i|^2 / 2h^2)
            phi[i] += grads[j] * k_ji + alpha * grad_xj_k
    return phi / n, h


def test_stein_direction_matches_direct_evaluation_of_eq2():
    rng = np.random.default_rng(3)
    x, g = rng.normal(size=(7, 5)), rng.normal(size=(7, 5))
    phi, kernel, h = stein_direction(torch.tensor(x), torch.tensor(g), temperature=10.0)
    expected_phi, expected_h = direct_eq2(x, g, 10.0)
    assert h.item() == pytest.approx(expected_h, rel=1e-9)
    np.testing.assert_allclose(phi.numpy(), expected_phi, rtol=1e-9, atol=1e-12)
    expected_k = np.exp(-np.sum((x[:, None] - x[None]) ** 2, -1) / (2 * expected_h ** 2))
    np.testing.assert_allclose(kernel.numpy(), expected_k, rtol=1e-9)


def test_bandwidth_is_the_median_heuristic_and_kernel_is_rbf():
    x = torch.tensor([[0.0], [1.0], [3.0]], dtype=torch.float64)
    sq = squared_distances(x)
    np.testing.assert_allclose(sq.numpy(), [[0, 1, 9], [1, 0, 4], [9, 4, 0]])
    h = median_bandwidth(sq)  # median of {0,0,0,1,1,4,4,9,9} = 1
    assert h.item() == pytest.approx(math.sqrt(0.5 / math.log(4)))
    assert rbf_kernel(sq, h)[0, 2].item() == pytest.approx(math.exp(-9 / (2 * h.item() ** 2)))


def test_pure_repulsion_spreads_particles_apart():
    x = torch.randn(10, 6, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 0.1
    spreads = []
    for _ in range(50):
        phi, _, _ = stein_direction(x, torch.zeros_like(x), temperature=10.0)
        x = x + 0.01 * phi
        spreads.append(torch.pdist(x).min().item())
    assert all(b > a for a, b in zip(spreads, spreads[1:]))
    assert spreads[-1] > 1.2 * spreads[0]


def test_batched_particle_gradients_equal_per_particle_gradients():
    sampler = SVPGSampler(3, SVPGConfig(num_particles=4), seed=1)
    ens = sampler.particles
    states = torch.rand(4, 5, 3, generator=torch.Generator().manual_seed(2))
    actions = torch.randn(4, 5, 3, generator=torch.Generator().manual_seed(3))
    mean, log_std = ens.policy(states)
    batched = torch.autograd.grad(gaussian_log_prob(actions, mean, log_std).mean(1).sum(), ens.actor_parameters())
    batched_flat = flatten_per_particle(list(batched))
    for i in range(4):  # particle i alone, as a plain MLP on its own slices
        w = [p[i].detach().clone().requires_grad_(True) for p in ens.actor_parameters()]
        x = torch.tanh(states[i] @ w[0] + w[1])
        x = torch.tanh(x @ w[2] + w[3])
        lp = gaussian_log_prob(actions[i], x @ w[4] + w[5], w[6]).mean()
        single = torch.cat([g.reshape(-1) for g in torch.autograd.grad(lp, w)])
        torch.testing.assert_close(batched_flat[i], single)


def test_moves_are_at_most_max_step_and_stay_in_the_cube():
    sampler = SVPGSampler(3, SVPGConfig(num_particles=6, rollout_length=4, horizon=1000), seed=0)
    sampler.states = torch.tensor([[1.0, 1.0, 0.0]] * 6)  # a corner: most moves leave the cube and are clipped
    for _ in range(5):
        start = sampler.states.clone()
        points = sampler.propose().reshape(6, 4, 3)
        pending = sampler.pending
        a = pending["actions"]
        expected = (pending["states"] + 0.05 * a / a.norm(dim=-1, keepdim=True).clamp_min(1.0)).clamp(0, 1)
        np.testing.assert_allclose(points, expected.numpy(), rtol=0, atol=1e-6)
        path = np.concatenate([start.numpy()[:, None], points], axis=1)
        assert np.linalg.norm(np.diff(path, axis=1), axis=-1).max() <= 0.05 + 1e-6
        assert points.min() >= 0.0 and points.max() <= 1.0
        sampler.update(np.zeros(24))


def test_particles_restart_uniformly_at_the_horizon():
    sampler = SVPGSampler(2, SVPGConfig(num_particles=5, rollout_length=1, horizon=3), seed=4)
    for step in range(1, 10):
        before = sampler.states.clone()
        reached = torch.as_tensor(sampler.propose(), dtype=torch.float32)
        torch.testing.assert_close(sampler.pending["states"][:, 0], before)
        ended = step % 3 == 0
        assert sampler.pending["masks"].eq(0.0 if ended else 1.0).all()
        if ended:  # a fresh uniform point, not the point reached
            assert not torch.allclose(sampler.states, reached)
            assert int(sampler.steps_in_episode.max()) == 0
        else:
            torch.testing.assert_close(sampler.states, reached)
        sampler.update(np.zeros(5))


def test_particles_learn_to_propose_near_a_rewarding_corner():
    """Reward peaked at (1, 1); paper hyperparameters. Uniform proposals are 0.765 from the corner on average."""
    sampler = SVPGSampler(2, SVPGConfig(num_particles=10), seed=0)
    corner = np.array([1.0, 1.0])
    distances = []
    for _ in range(800):
        points = sampler.propose()
        d = np.linalg.norm(points - corner, axis=1)
        sampler.update(np.exp(-d ** 2 / 0.25))
        distances.append(d.mean())
    assert np.mean(distances[-200:]) < 0.5
    grid = np.stack(np.meshgrid(np.linspace(0.05, 0.85, 5), np.linspace(0.05, 0.85, 5)), -1).reshape(-1, 2)
    with torch.no_grad():
        mean, _ = sampler.particles.policy(torch.tensor(grid, dtype=torch.float32).expand(10, -1, -1).contiguous())
    toward = (corner - grid) / np.linalg.norm(corner - grid, axis=1, keepdims=True)
    cosine = (mean.numpy() * toward).sum(-1) / np.linalg.norm(mean.numpy(), axis=-1)
    assert cosine.mean() > 0.6


def test_update_checks_its_inputs_and_state_round_trips():
    sampler = SVPGSampler(2, SVPGConfig(num_particles=3, rollout_length=2), seed=0)
    with pytest.raises(SamplerError, match="propose"):
        sampler.update(np.zeros(6))
    sampler.propose()
    with pytest.raises(SamplerError, match="propose"):
        sampler.propose()
    with pytest.raises(SamplerError, match="6 finite rewards"):
        sampler.update(np.zeros(5))
    sampler.update(np.ones(6))
    twin = SVPGSampler(2, SVPGConfig(num_particles=3, rollout_length=2), seed=99)
    twin.load_state_dict(sampler.state_dict())
    for _ in range(3):
        a, b = sampler.propose(), twin.propose()
        np.testing.assert_array_equal(a, b)
        assert sampler.update(a[:, 0]) == twin.update(b[:, 0])
    with pytest.raises(SamplerError, match="particles"):
        SVPGSampler(2, SVPGConfig(num_particles=4, rollout_length=2), seed=0).load_state_dict(sampler.state_dict())


def _pinned_at_the_top(restart_when_stuck: bool) -> SVPGSampler:
    """1-D particles at u = 1 whose policy pushes straight up (mean +10, tiny std): every move is clipped away."""
    sampler = SVPGSampler(1, SVPGConfig(num_particles=3, horizon=1000, restart_when_stuck=restart_when_stuck), seed=0)
    with torch.no_grad():
        sampler.particles.mean_w.zero_()
        sampler.particles.mean_b.fill_(10.0)
        sampler.particles.log_std.fill_(-20.0)
    sampler.states = torch.ones(3, 1)
    return sampler


def test_a_particle_pinned_at_a_face_restarts_only_with_restart_when_stuck():
    pinned = _pinned_at_the_top(restart_when_stuck=False)
    assert (pinned.propose() == 1.0).all() and (pinned.states == 1.0).all()
    assert (pinned.pending["masks"] == 1.0).all() and (pinned.steps_in_episode == 1).all()

    restarted = _pinned_at_the_top(restart_when_stuck=True)
    proposals = restarted.propose()
    assert (proposals == 1.0).all()  # the proposal is the clipped point; the particle then restarts from it
    assert (restarted.pending["masks"] == 0.0).all(), "a stuck step ends the particle's episode"
    assert (restarted.steps_in_episode == 0).all() and (restarted.states < 1.0).all()


def test_restart_when_stuck_resumes_exactly_from_a_checkpoint():
    config = SVPGConfig(num_particles=4, rollout_length=3, horizon=1000, restart_when_stuck=True, max_step_length=0.5)
    sampler = SVPGSampler(1, config, seed=3)
    for _ in range(4):  # long moves: particles reach the faces and restart
        sampler.update(sampler.propose()[:, 0])
    twin = SVPGSampler(1, config, seed=99)
    twin.load_state_dict(sampler.state_dict())
    stuck_restarts = 0
    for _ in range(6):
        a, b = sampler.propose(), twin.propose()
        np.testing.assert_array_equal(a, b)
        stuck_restarts += int((sampler.pending["masks"] == 0).sum())  # no horizon ends in 30 steps
        assert sampler.update(a[:, 0]) == twin.update(b[:, 0])
    assert stuck_restarts > 0


def _same_state(a: dict, b: dict) -> bool:
    flat_a, flat_b = torch.utils._pytree.tree_leaves(a), torch.utils._pytree.tree_leaves(b)
    return len(flat_a) == len(flat_b) and all(
        torch.equal(x, y) if isinstance(x, torch.Tensor) else x == y for x, y in zip(flat_a, flat_b))


def test_absurd_rewards_are_refused_and_the_real_ones_still_accepted():
    """+-1e300 is finite but no discriminator produces it: it used to turn the particles into NaN."""
    sampler = SVPGSampler(2, SVPGConfig(num_particles=4), seed=3)
    sampler.propose()
    before = sampler.state_dict()
    with pytest.raises(SamplerError, match="rewards up to 1e\\+300 in size"):
        sampler.update(np.array([1e300, -1e300, 0.0, 0.0]))
    assert _same_state(sampler.state_dict(), before)
    sampler.update(np.full(4, -0.69))  # the real rewards of the same proposals
    assert all(torch.isfinite(p).all() for p in sampler.particles.parameters())


def test_an_update_that_would_leave_non_finite_particles_is_undone(monkeypatch):
    import adr_core.samplers.svpg as svpg

    sampler = SVPGSampler(2, SVPGConfig(num_particles=4), seed=3)
    sampler.propose()
    before = sampler.state_dict()
    real = svpg.stein_direction
    monkeypatch.setattr(svpg, "stein_direction", lambda *a: (real(*a)[0] * float("nan"), *real(*a)[1:]))
    with pytest.raises(SamplerError, match="non-finite"):
        sampler.update(np.full(4, -0.69))
    assert _same_state(sampler.state_dict(), before)  # nothing non-finite can be checkpointed


def test_constant_reward_ablation_ignores_the_rewards_given():
    """svpg.constant_reward (issue 60's ablation): the particles move the same whatever rewards arrive, and exactly as
    they would with that constant given as every reward; without it the given rewards matter."""
    def after(rewards: np.ndarray, constant: float | None) -> torch.Tensor:
        sampler = SVPGSampler(2, SVPGConfig(num_particles=4, rollout_length=2, constant_reward=constant), seed=5)
        sampler.propose()
        sampler.update(rewards)
        return torch.as_tensor(sampler.propose())

    high, low = np.linspace(0.0, 1.0, 8), -np.linspace(0.0, 3.0, 8)
    assert torch.equal(after(high, 0.25), after(low, 0.25))
    assert torch.equal(after(high, 0.25), after(np.full(8, 0.25), None))
    assert not torch.equal(after(high, None), after(low, None))
    with pytest.raises(ValueError, match="constant_reward"):
        SVPGConfig(constant_reward=float("nan"))
