"""DDPG / TD3 / SAC / CrossQ: target-update and TD-target math, n-step returns, replay ring, update schedule, state,
SAC's squashed-Gaussian log-probability and temperature, config validation, a small learning check for each agent
(CrossQ's own: test_crossq.py)."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch.nn import functional as F

from adr_core.agents import ActorPolicy, AgentConfig, ReplayBuffer, make_agent
from adr_core.agents.networks import ActorStateError, actor_from_state_dict
from adr_core.agents.replay_buffer import nstep_transitions
from adr_core.rollout import Trajectory, rollout

OBS, ACT = 3, 2


def random_trajectory(rng: np.random.Generator, length: int, obs_dim: int = OBS, act_dim: int = ACT) -> Trajectory:
    return Trajectory(obs=rng.normal(size=(length, obs_dim)).astype(np.float32),
                      actions=rng.uniform(-1, 1, (length, act_dim)).astype(np.float32),
                      next_obs=rng.normal(size=(length, obs_dim)).astype(np.float32),
                      rewards=rng.normal(size=length).astype(np.float32), terminated=rng.random(length) < 0.2,
                      params=np.zeros(1), params_normalized=np.zeros(1), kind="randomized", iteration=0, slot=0,
                      policy_version=0, episode_return=0.0, length=length)


def small_config(**overrides) -> AgentConfig:
    base = dict(hidden_sizes=(32, 32), batch_size=16, learning_starts=0, buffer_capacity=1000)
    return AgentConfig(**{**base, **overrides})


def snapshot(module: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in module.parameters()]


@pytest.mark.parametrize("algorithm", ["ddpg", "td3"])
def test_soft_target_update_is_tau_interpolation(algorithm):
    agent = make_agent(small_config(algorithm=algorithm, tau=0.1, td3_policy_delay=1), OBS, ACT, seed=0)
    agent.store(random_trajectory(np.random.default_rng(0), 100))
    critic = agent.critic if algorithm == "ddpg" else agent.critic1
    critic_target = agent.critic_target if algorithm == "ddpg" else agent.critic1_target
    old_actor_t, old_critic_t = snapshot(agent.actor_target), snapshot(critic_target)
    agent.update(1)
    for old, online, new in zip(old_actor_t + old_critic_t, snapshot(agent.actor) + snapshot(critic),
                                snapshot(agent.actor_target) + snapshot(critic_target)):
        torch.testing.assert_close(new, 0.9 * old + 0.1 * online)


def test_ddpg_critic_regresses_on_the_bellman_target():
    agent = make_agent(small_config(gamma=0.9), OBS, ACT, seed=1)
    agent.store(random_trajectory(np.random.default_rng(1), 64))
    state = agent.replay.generator.get_state()
    batch = agent.replay.sample(16)
    agent.replay.generator.set_state(state)  # the update will draw this same batch
    with torch.no_grad():
        y = batch.rewards + batch.discount * agent.critic_target(batch.next_obs, agent.actor_target(batch.next_obs))
        expected = F.mse_loss(agent.critic(batch.obs, batch.actions), y).item()
    assert agent.update(1)["critic_loss"] == pytest.approx(expected, rel=1e-5)
    assert batch.discount.unique().tolist() == pytest.approx([0.0, 0.9])  # one-step: gamma * not_done


def test_td3_delays_the_actor_and_targets():
    agent = make_agent(small_config(algorithm="td3", td3_policy_delay=2), OBS, ACT, seed=2)
    agent.store(random_trajectory(np.random.default_rng(2), 64))
    actor, target = snapshot(agent.actor), snapshot(agent.actor_target)
    losses = agent.update(1)  # step 1 of 2: critics only
    assert np.isnan(losses["actor_loss"])
    for a, b in zip(actor + target, snapshot(agent.actor) + snapshot(agent.actor_target)):
        torch.testing.assert_close(a, b)
    assert not np.isnan(agent.update(1)["actor_loss"])  # step 2: actor and targets move
    assert any(not torch.equal(a, b) for a, b in zip(actor, snapshot(agent.actor)))


def test_replay_buffer_is_a_ring_and_samples_whole_rows():
    buffer = ReplayBuffer(1, 1, capacity=5, generator=torch.Generator().manual_seed(0))
    for start in (0, 3):
        n = 3 if start == 0 else 4
        values = np.arange(start, start + n, dtype=np.float32)
        buffer.add(values[:, None], -values[:, None], 10 * values, values[:, None] + 0.5, 0.5 * (values != 6))
    assert len(buffer) == 5 and buffer.position == 2
    np.testing.assert_array_equal(buffer.storage[:, 0].numpy(), [5, 6, 2, 3, 4])
    batch = buffer.sample(200)
    torch.testing.assert_close(batch.actions, -batch.obs)
    torch.testing.assert_close(batch.rewards, 10 * batch.obs)
    torch.testing.assert_close(batch.next_obs, batch.obs + 0.5)
    torch.testing.assert_close(batch.discount, 0.5 * (batch.obs != 6).float())
    assert set(batch.obs[:, 0].tolist()) == {2.0, 3.0, 4.0, 5.0, 6.0}


def test_one_update_per_step_after_learning_starts():
    agent = make_agent(small_config(learning_starts=100, updates_per_step=1.0), OBS, ACT, seed=0)
    rng = np.random.default_rng(0)
    agent.store(random_trajectory(rng, 60))
    assert agent.updates_due() == 0
    agent.store(random_trajectory(rng, 70))
    assert agent.updates_due() == 30
    agent.update(30)
    agent.store(random_trajectory(rng, 5))
    assert agent.updates_due() == 5 and agent.policy_version == 30


def test_state_round_trip_continues_identically():
    rng = np.random.default_rng(4)
    for algorithm in ("ddpg", "td3", "sac", "crossq"):
        a = make_agent(small_config(algorithm=algorithm), OBS, ACT, seed=0)
        a.store(random_trajectory(rng, 50))
        a.update(3)
        b = make_agent(small_config(algorithm=algorithm), OBS, ACT, seed=7)
        b.load_state_dict(a.state_dict())
        assert a.update(4) == b.update(4)
        obs = rng.normal(size=(5, OBS)).astype(np.float32)
        np.testing.assert_array_equal(a.act(obs), b.act(obs))
    with pytest.raises(ValueError, match="obs_dim"):
        make_agent(small_config(algorithm="td3"), OBS + 1, ACT, seed=0).load_state_dict(a.state_dict())


def test_a_simulator_process_can_run_the_actor_from_plain_weights():
    agent = make_agent(small_config(), OBS, ACT, seed=3)
    policy = ActorPolicy.from_state_dict(agent.actor_state_dict())
    obs = np.random.default_rng(0).normal(size=(4, OBS)).astype(np.float32)
    np.testing.assert_allclose(policy(obs), agent.act(obs), rtol=1e-5, atol=1e-6)  # numpy forward, float32
    assert policy.actor.hidden_sizes == (32, 32)
    broken = agent.actor_state_dict()
    broken["layers.1.weight"] = torch.zeros(32, 5)
    with pytest.raises(ActorStateError):
        actor_from_state_dict(broken)


class Reach1D(gym.Env):
    """Move a point on [-1, 1] to a goal: obs (x, goal), x' = clip(x + 0.2 a), reward -|x' - goal|, 20 steps."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x, self.goal, self.t = self.np_random.uniform(-1, 1), self.np_random.uniform(-0.6, 0.6), 0
        return self._obs(), {}

    def step(self, action):
        self.x = float(np.clip(self.x + 0.2 * float(action[0]), -1.0, 1.0))
        self.t += 1
        distance = abs(self.x - self.goal)
        return self._obs(), -distance, False, self.t >= 20, {"distance": distance}

    def _obs(self):
        return np.array([self.x, self.goal], dtype=np.float32)


@pytest.mark.parametrize("algorithm,noise", [("ddpg", 0.2), ("td3", 0.2), ("sac", 1.0), ("crossq", 1.0)])
def test_agent_learns_a_small_reaching_task(algorithm, noise):
    """~3000 agent steps with one update per step; a fixed seed, a wide margin (random policy: ~0.5 final distance).

    Rollouts run the actor rebuilt from plain weights, as a simulator process does (SAC explores by sampling it)."""
    env = Reach1D()
    agent = make_agent(AgentConfig(algorithm=algorithm, hidden_sizes=(64, 64), batch_size=64, learning_starts=200,
                                   buffer_capacity=10_000, exploration_noise=noise), 2, 1, seed=0)

    def episodes(iteration: int, noise: float, store: bool) -> list[Trajectory]:
        policy = ActorPolicy.from_state_dict(agent.actor_state_dict())
        out = []
        for slot in range(10):
            traj = rollout(env, policy, params=np.zeros(1), params_normalized=np.zeros(1), kind="randomized",
                           iteration=iteration, slot=slot, run_seed=0, exploration_noise=noise)
            if store:
                agent.store(traj)
            out.append(traj)
        return out

    before = np.mean([t.final_distance for t in episodes(10_000, 0.0, store=False)])
    critic_losses = []
    for iteration in range(15):
        episodes(iteration, noise, store=True)
        critic_losses.append(agent.update(agent.updates_due())["critic_loss"])
    after = np.mean([t.final_distance for t in episodes(10_000, 0.0, store=False)])
    assert agent.transitions_seen == 3000 and agent.updates_done == 2800
    assert np.isnan(critic_losses[0]) and np.isfinite(critic_losses[1:]).all()  # the first round is the warm-up
    assert after < 0.1 < 0.3 < before


def test_nstep_transitions_sum_rewards_and_stop_at_the_episode_end():
    rewards = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    next_obs = np.arange(4, dtype=np.float32)[:, None]
    returns, nxt, discounts = nstep_transitions(rewards, next_obs, np.array([0, 0, 0, 1], bool), gamma=0.5, n=2)
    np.testing.assert_allclose(returns, [1 + 0.5 * 2, 2 + 0.5 * 3, 3 + 0.5 * 4, 4])
    np.testing.assert_array_equal(nxt[:, 0], [1, 2, 3, 3])
    np.testing.assert_allclose(discounts, [0.25, 0.25, 0.0, 0.0])  # the last two reach the terminal state
    returns, nxt, discounts = nstep_transitions(rewards, next_obs, np.zeros(4, bool), gamma=0.5, n=3)  # truncated
    np.testing.assert_allclose(returns, [1 + 1 + 0.75, 2 + 1.5 + 1, 3 + 2, 4])
    np.testing.assert_array_equal(nxt[:, 0], [2, 3, 3, 3])
    np.testing.assert_allclose(discounts, [0.125, 0.125, 0.25, 0.5])  # bootstrap from the last state
    one = nstep_transitions(rewards, next_obs, np.array([0, 0, 0, 1], bool), gamma=0.9, n=1)
    np.testing.assert_array_equal(one[0], rewards)
    np.testing.assert_allclose(one[2], [0.9, 0.9, 0.9, 0.0])


def test_an_agent_stores_nstep_rows():
    agent = make_agent(small_config(n_step=3, gamma=0.5), OBS, ACT, seed=0)
    trajectory = random_trajectory(np.random.default_rng(5), 6)
    trajectory.terminated[:] = False
    agent.store(trajectory)
    returns, next_obs, discounts = nstep_transitions(trajectory.rewards, trajectory.next_obs, trajectory.terminated,
                                                     0.5, 3)
    rows = agent.replay.storage[:6]
    np.testing.assert_allclose(rows[:, OBS + ACT].numpy(), returns, rtol=1e-6)
    np.testing.assert_allclose(rows[:, OBS + ACT + 1].numpy(), discounts, rtol=1e-6)
    np.testing.assert_array_equal(rows[:, OBS + ACT + 2:].numpy(), next_obs)


def test_sac_log_probability_is_the_squashed_gaussian_density():
    agent = make_agent(small_config(algorithm="sac"), OBS, ACT, seed=0)
    obs = torch.as_tensor(np.random.default_rng(0).normal(size=(64, OBS)), dtype=torch.float32)
    state = agent.generator.get_state()
    actions, log_prob = agent._sample(obs)
    agent.generator.set_state(state)
    mean, log_std = agent.actor.mean_log_std(obs)
    eps = torch.randn(mean.shape, generator=agent.generator)
    dist = torch.distributions.TransformedDistribution(
        torch.distributions.Normal(mean, log_std.exp()), [torch.distributions.TanhTransform()])
    torch.testing.assert_close(actions, torch.tanh(mean + log_std.exp() * eps))
    expected = dist.log_prob(torch.tanh(mean + log_std.exp() * eps).clamp(-1 + 1e-6, 1 - 1e-6)).sum(-1, keepdim=True)
    torch.testing.assert_close(log_prob, expected, rtol=1e-3, atol=1e-3)


def test_sac_temperature_falls_when_the_policy_is_more_random_than_the_target():
    agent = make_agent(small_config(algorithm="sac"), OBS, ACT, seed=0)
    agent.store(random_trajectory(np.random.default_rng(6), 200))
    before = agent.alpha
    agent.update(20)  # the initial policy (std ~1, 2 actions) has entropy well above the target -2
    assert agent.alpha < before


@pytest.mark.parametrize("per_dim, rises", [(-1.0, True), (-20.0, False)])
def test_sac_temperature_moves_toward_the_configured_target_entropy(per_dim, rises):
    agent = make_agent(small_config(algorithm="sac", sac_target_entropy_per_dim=per_dim), OBS, ACT, seed=0)
    assert agent.target_entropy == per_dim * ACT
    with torch.no_grad():  # a nearly deterministic policy: std ~0.007, about -3.5 nats per dimension
        agent.actor.log_std.weight.zero_()
        agent.actor.log_std.bias.fill_(-10.0)
    agent.store(random_trajectory(np.random.default_rng(6), 200))
    before = agent.alpha
    agent.update(20)
    assert (agent.alpha > before) == rises  # below the target -2: more temperature; above -40: less


def test_sac_reports_its_temperature_and_the_entropy_of_the_block_it_just_ran():
    # learning rates ~0 keep the policy fixed over the block, so its entropy can be estimated independently
    agent = make_agent(small_config(algorithm="sac", batch_size=512, actor_lr=1e-12, critic_lr=1e-12), OBS, ACT,
                       seed=0)
    agent.store(random_trajectory(np.random.default_rng(6), 200))
    stats = agent.update(5)
    assert stats["entropy_alpha"] == agent.alpha
    state = agent.generator.get_state()
    obs = torch.as_tensor(np.random.default_rng(1).normal(size=(4096, OBS)), dtype=torch.float32)
    _, log_prob = agent._sample(obs)
    agent.generator.set_state(state)
    assert stats["policy_entropy"] == pytest.approx(-log_prob.mean().item(), abs=0.15)  # 2560 vs 4096 samples
    assert set(agent.update(0)) == {"critic_loss", "actor_loss"}  # no step ran: nothing to report
    later = agent.update(1)  # a new block: its own mean, not the running one
    assert later["policy_entropy"] != stats["policy_entropy"]
    assert "entropy_alpha" not in make_agent(small_config(algorithm="td3"), OBS, ACT, seed=0).update(0)


def test_sac_explores_by_sampling_its_gaussian_and_acts_with_its_mean():
    agent = make_agent(small_config(algorithm="sac"), OBS, ACT, seed=0)
    policy = ActorPolicy.from_state_dict(agent.actor_state_dict())
    assert policy.gaussian and policy.actor.hidden_sizes == (32, 32)
    obs = np.random.default_rng(0).normal(size=OBS).astype(np.float32)
    # absolute tolerance too: an action near 0 differs in its last float32 bits between CPUs (AVX2 vs AVX-512 kernels)
    np.testing.assert_allclose(policy(obs), agent.act(obs), rtol=1e-6, atol=1e-6)
    samples = np.array([policy.explore(obs, np.random.default_rng(i), 1.0) for i in range(200)])
    assert samples.std(axis=0).min() > 0.1 and np.abs(samples).max() < 1.0
    np.testing.assert_allclose(policy.explore(obs, np.random.default_rng(0), 0.0), policy(obs), rtol=1e-6, atol=1e-6)


def test_deterministic_actor_explores_with_the_rollouts_gaussian_noise():
    agent = make_agent(small_config(), OBS, ACT, seed=0)
    policy = ActorPolicy.from_state_dict(agent.actor_state_dict())
    obs = np.random.default_rng(0).normal(size=OBS).astype(np.float32)
    expected = policy(obs).astype(np.float64) + np.random.default_rng(3).normal(0.0, 0.1, size=ACT)
    np.testing.assert_array_equal(policy.explore(obs, np.random.default_rng(3), 0.1), expected)


@pytest.mark.parametrize("overrides,message", [
    ({"algorithm": "ppo"}, "agent.algorithm must be one of"),
    ({"n_step": 0}, "agent.n_step must be >= 1"),
    ({"batch_size": 2000, "buffer_capacity": 1000}, "agent.batch_size 2000 exceeds agent.buffer_capacity 1000"),
    ({"updates_per_step": -0.5}, "agent.updates_per_step must be >= 0"),
    ({"sac_initial_alpha": 0.0}, "agent.sac_initial_alpha must be > 0"),
    ({"sac_target_entropy_per_dim": 0.7}, r"agent.sac_target_entropy_per_dim must be in \[-20, log 2"),
    ({"sac_target_entropy_per_dim": float("nan")}, "agent.sac_target_entropy_per_dim must be in"),
])
def test_impossible_agent_settings_are_refused_naming_the_key(overrides, message):
    with pytest.raises(ValueError, match=message):
        AgentConfig(**overrides)


def assert_same_state(a, b, path: str = "") -> None:
    """Recursive equality of two agent state_dicts (tensors bit for bit)."""
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for key in a:
            assert_same_state(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_state(x, y, f"{path}[{i}]")
    elif isinstance(a, torch.Tensor):
        assert torch.equal(a, b), path
    else:
        assert a == b, path


@pytest.mark.parametrize("algorithm", ["ddpg", "td3", "sac", "crossq"])
def test_undo_returns_to_the_state_before_a_store_and_update_block_even_after_the_ring_wrapped(algorithm):
    """The graph trainer's rollback of an iteration that cannot complete (issue 28): cheap, and exact."""
    rng = np.random.default_rng(8)
    agent = make_agent(small_config(algorithm=algorithm, buffer_capacity=150), OBS, ACT, seed=3)
    agent.store(random_trajectory(rng, 120))
    agent.update(5)
    before = agent.state_dict()
    point = agent.undo_point(upcoming=100)
    agent.store(random_trajectory(rng, 60))  # wraps: overwrites 30 of the stored rows
    agent.store(random_trajectory(rng, 40))
    agent.update(7)
    assert agent.replay.size == 150 and agent.updates_done == 12
    agent.undo(point)
    assert_same_state(agent.state_dict(), before)
    # and it learns on exactly as it would have from there
    again = make_agent(small_config(algorithm=algorithm, buffer_capacity=150), OBS, ACT, seed=3)
    again.load_state_dict(before)
    trajectory = random_trajectory(np.random.default_rng(9), 50)
    for a in (agent, again):
        a.store(trajectory)
        a.update(3)
    assert_same_state(agent.state_dict(), again.state_dict())


@pytest.mark.parametrize("algorithm", ["ddpg", "td3", "sac", "crossq"])
def test_observation_normalization_is_fitted_on_the_warmup_rows_and_then_frozen(algorithm):
    rng = np.random.default_rng(5)
    agent = make_agent(small_config(algorithm=algorithm, normalize_observations=True), OBS, ACT, seed=0)
    warmup = random_trajectory(rng, 60)
    warmup.obs[:] = warmup.obs * np.array([3.0, 0.02, 0.0], np.float32) + np.array([5.0, 0.1, 7.0], np.float32)
    agent.store(warmup)
    agent.update(1)
    mean, std = warmup.obs.astype(np.float64).mean(0), warmup.obs.astype(np.float64).std(0)
    networks = [m for m in vars(agent).values() if isinstance(m, torch.nn.Module)]
    assert len(networks) >= (3 if algorithm == "crossq" else 4)  # actor, its target, the critic(s), their targets
    for network in networks:
        np.testing.assert_allclose(network.obs_shift.numpy(), mean, rtol=1e-5)
        np.testing.assert_allclose(network.obs_scale.numpy(), 1.0 / np.maximum(std, 0.01), rtol=1e-5)
    fitted = agent.actor.obs_shift.clone()
    agent.store(random_trajectory(rng, 60))  # other statistics: the normalization stays as fitted
    agent.update(2)
    assert torch.equal(agent.actor.obs_shift, fitted)
    # the actor sees clip((obs - mean) / std, +-10): the same weights without normalization on that input agree
    plain = make_agent(small_config(algorithm=algorithm), OBS, ACT, seed=0)
    plain.actor.load_state_dict({k: v for k, v in agent.actor.state_dict().items() if not k.startswith("obs_")})
    obs = (rng.normal(size=(6, OBS)) * 4 + 5).astype(np.float32)
    normalized = np.clip((obs - agent.actor.obs_shift.numpy()) * agent.actor.obs_scale.numpy(), -10, 10)
    np.testing.assert_allclose(agent.act(obs), plain.act(normalized.astype(np.float32)), rtol=1e-5, atol=1e-6)
    # a simulator process's numpy policy and a resumed agent carry it
    policy = ActorPolicy.from_state_dict(agent.actor_state_dict())
    np.testing.assert_allclose(policy(obs), agent.act(obs), rtol=1e-5, atol=1e-6)
    resumed = make_agent(small_config(algorithm=algorithm, normalize_observations=True), OBS, ACT, seed=9)
    resumed.load_state_dict(agent.state_dict())
    assert agent.update(3) == resumed.update(3)
    np.testing.assert_array_equal(agent.act(obs), resumed.act(obs))


def test_without_observation_normalization_the_networks_have_no_normalization_buffers():
    agent = make_agent(small_config(algorithm="sac"), OBS, ACT, seed=0)
    assert not any(k.startswith("obs_") for k in agent.actor_state_dict())
    assert not any(k.startswith("obs_") for k in agent.critic.state_dict())
