"""A CleanRL-style loop (no framework) trained with Active Domain Randomization through the ADR loop API.

    source scripts/env.sh
    python examples/cleanrl_style_adr.py --steps 20000

The learner is deliberately the simplest thing that learns: this project's TD3 agent stepped by hand, one
transition at a time. The point is the four lines that involve ADR: build the loop, wrap the env, and when the
loop's batch is complete, ``loop.update(policy)``.
"""
from __future__ import annotations

import argparse

import numpy as np
import torch

from adr_core import ADRLoop, ADRWrapper
from adr_core.agents import ActorPolicy, AgentConfig, make_agent
from adr_core.envs import make_env
from adr_core.rollout import Trajectory
from adr_core.training.config import TrainConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(args.seed)

    loop = ADRLoop.from_config(TrainConfig(env_id="adr/LunarLander-v0", sampler="adr", seed=args.seed))  # ADR
    env = ADRWrapper(make_env("adr/LunarLander-v0"), loop)  # ADR
    agent = make_agent(AgentConfig(algorithm="td3", hidden_sizes=(64, 64), batch_size=128, learning_starts=1000),
                       loop.obs_dim, loop.act_dim, seed=args.seed)
    obs, _ = env.reset(seed=args.seed)
    episode_return, returns = 0.0, []
    zero = np.zeros(1)
    for step in range(args.steps):
        action = np.clip(agent.act(obs) + rng.normal(0.0, 0.1, loop.act_dim), -1, 1).astype(np.float32)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        agent.store(Trajectory(obs=obs[None], actions=action[None], next_obs=next_obs[None],
                               rewards=np.array([reward], np.float32), terminated=np.array([terminated]), params=zero,
                               params_normalized=zero, kind="randomized", iteration=0, slot=0, policy_version=0,
                               episode_return=0.0, length=1))
        agent.update(agent.updates_due())
        episode_return += float(reward)
        obs = next_obs
        if terminated or truncated:
            returns.append(episode_return)
            episode_return = 0.0
            obs, _ = env.reset()
        if loop.ready:  # ADR: reference episodes with the current policy, discriminator rewards, particle step
            metrics = loop.update(ActorPolicy.from_state_dict(agent.actor_state_dict()), exploration_noise=0.1)
            print(f"step {step + 1}: ADR iteration {int(metrics['iteration'])}, mean return of the batch "
                  f"{metrics['return_mean']:.1f}, discriminator reward {metrics['sampler_reward_mean']:.3f}")
    print(f"{loop.iteration} ADR iterations, last 10 episode returns {np.mean(returns[-10:]):.1f}")


if __name__ == "__main__":
    main()
