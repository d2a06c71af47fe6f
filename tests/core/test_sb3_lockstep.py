"""Our DDPG and TD3 take the same gradient steps as stable-baselines3's, to float rounding.

Both sides start from the same weights (SB3's, copied into ours) and get the same replay batches; after 40 gradient
steps every online and target parameter must agree. This pins down the update rule (TD target, critic loss, actor
loss, Adam, policy delay, soft updates) independently of seed noise, which ``experiments/parity.py`` measures on
whole learning runs. TD3 runs with the smoothing noise clipped to 0 on both sides: the two libraries draw that noise
from different random streams; the twin-critic minimum, the delay and everything else are compared.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import stable_baselines3 as sb3  # a test requirement (requirements/python.txt)
import torch
from stable_baselines3.common.logger import configure
from stable_baselines3.common.type_aliases import ReplayBufferSamples

from adr_core.agents import AgentConfig, make_agent
from adr_core.agents.replay_buffer import Batch

HIDDEN, BATCH, GAMMA, TAU, LR, STEPS = (32, 32), 16, 0.99, 0.005, 1e-3, 40


def _linears(sequential: torch.nn.Module) -> list[torch.nn.Linear]:
    return [m for m in sequential if isinstance(m, torch.nn.Linear)]


def _copy(ours: torch.nn.Module, theirs: torch.nn.Module) -> None:
    with torch.no_grad():
        for mine, other in zip(ours.layers, _linears(theirs), strict=True):
            mine.weight.copy_(other.weight)
            mine.bias.copy_(other.bias)


def _pairs(agent, model, algorithm: str) -> list[tuple[str, torch.nn.Module, torch.nn.Module]]:
    policy = model.policy
    pairs = [("actor", agent.actor, policy.actor.mu), ("actor_target", agent.actor_target, policy.actor_target.mu)]
    if algorithm == "ddpg":
        return pairs + [("critic", agent.critic, policy.critic.qf0),
                        ("critic_target", agent.critic_target, policy.critic_target.qf0)]
    return pairs + [("critic1", agent.critic1, policy.critic.qf0), ("critic2", agent.critic2, policy.critic.qf1),
                    ("critic1_target", agent.critic1_target, policy.critic_target.qf0),
                    ("critic2_target", agent.critic2_target, policy.critic_target.qf1)]


def _max_difference(ours: torch.nn.Module, theirs: torch.nn.Module) -> float:
    return max(float((mine.weight - other.weight).abs().max().item()) for mine, other in
               zip(ours.layers, _linears(theirs), strict=True)) if ours.layers else 0.0


@pytest.mark.parametrize("algorithm", ["ddpg", "td3"])
def test_our_gradient_steps_match_stable_baselines3_from_the_same_weights_and_batches(algorithm):
    env = gym.make("Pendulum-v1")
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    common = dict(learning_rate=LR, batch_size=BATCH, tau=TAU, gamma=GAMMA, seed=0, device="cpu",
                  policy_kwargs=dict(net_arch=list(HIDDEN)))
    if algorithm == "ddpg":
        model = sb3.DDPG("MlpPolicy", env, **common)
    else:
        model = sb3.TD3("MlpPolicy", env, policy_delay=2, target_policy_noise=0.2, target_noise_clip=0.0, **common)
    model.set_logger(configure(None, []))
    agent = make_agent(AgentConfig(algorithm=algorithm, hidden_sizes=HIDDEN, actor_lr=LR, critic_lr=LR, tau=TAU,
                                   gamma=GAMMA, batch_size=BATCH, learning_starts=0, td3_policy_delay=2,
                                   td3_policy_noise=0.2, td3_noise_clip=0.0), obs_dim, act_dim, seed=1)
    pairs = _pairs(agent, model, algorithm)
    for _, ours, theirs in pairs:
        _copy(ours, theirs)
    assert all(_max_difference(ours, theirs) == 0.0 for _, ours, theirs in pairs)
    initial = {name: [layer.weight.detach().clone() for layer in ours.layers] for name, ours, _ in pairs}

    rng = np.random.default_rng(0)
    for _ in range(STEPS):
        obs = torch.as_tensor(rng.normal(size=(BATCH, obs_dim)), dtype=torch.float32)
        actions = torch.as_tensor(rng.uniform(-1, 1, (BATCH, act_dim)), dtype=torch.float32)
        next_obs = torch.as_tensor(rng.normal(size=(BATCH, obs_dim)), dtype=torch.float32)
        rewards = torch.as_tensor(rng.normal(size=(BATCH, 1)), dtype=torch.float32)
        dones = torch.as_tensor(rng.random((BATCH, 1)) < 0.2, dtype=torch.float32)
        samples = ReplayBufferSamples(obs, actions, next_obs, dones, rewards, None)
        model.replay_buffer.sample = lambda batch_size, env=None, samples=samples: samples
        model.train(gradient_steps=1, batch_size=BATCH)
        agent._gradient_step(Batch(obs=obs, actions=actions, rewards=rewards, discount=GAMMA * (1.0 - dones),
                                   next_obs=next_obs))
        agent.updates_done += 1

    differences = {name: _max_difference(ours, theirs) for name, ours, theirs in pairs}
    assert max(differences.values()) < 1e-5, differences
    moved = {name: max(float((layer.weight.detach() - start).abs().max())
                       for layer, start in zip(ours.layers, initial[name])) for name, ours, _ in pairs}
    assert min(moved.values()) > 1e-4, moved  # every network (targets too) was updated: the match is not trivial
