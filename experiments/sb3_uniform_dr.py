"""stable-baselines3 DDPG or TD3 with uniform domain randomization on an adr/* env: the comparison run of vs_sb3.py.

    python -m experiments.sb3_uniform_dr --algorithm ddpg --steps 5000 [--batch 1000] [--hidden 400 300] [--json out]

The env is this project's (``adr_core.envs.make_env``); a wrapper draws new physical parameters uniformly over the
training range at every reset, as the ``udr`` sampler does. Hyperparameters match adr_core's agents: actor and
critic ``--hidden`` (ReLU), Adam 1e-3, tau 0.005, gamma 0.99, Gaussian exploration noise 0.1, one gradient step
per env step (train_freq 1, gradient_steps 1) after ``--learning-starts`` steps, replay 1e6; TD3: policy delay 2,
target noise 0.2 clipped at 0.5. Prints one JSON object: steps, seconds inside ``learn()``, steps/s.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

from adr_core.cli_types import ArgumentParser
from adr_core.envs import make_env


class UniformDomainRandomization(gym.Wrapper):
    """New parameters, uniform over the space's training range, at every reset."""

    def __init__(self, env: gym.Env, seed: int) -> None:
        super().__init__(env)
        self.rng = np.random.default_rng(seed)
        self.space = env.unwrapped.randomization_space

    def reset(self, **kwargs):
        self.env.unwrapped.set_parameters(self.space.from_normalized(self.space.sample_uniform(self.rng, 1)[0]))
        return self.env.reset(**kwargs)


def build_model(algorithm: str, env: gym.Env, batch: int, hidden: list[int], learning_starts: int, seed: int):
    from stable_baselines3 import DDPG, TD3
    from stable_baselines3.common.noise import NormalActionNoise

    act_dim = env.action_space.shape[0]
    common = dict(learning_rate=1e-3, buffer_size=1_000_000, learning_starts=learning_starts, batch_size=batch,
                  tau=0.005, gamma=0.99, train_freq=1, gradient_steps=1, seed=seed, device="cpu", verbose=0,
                  action_noise=NormalActionNoise(np.zeros(act_dim), 0.1 * np.ones(act_dim)),
                  policy_kwargs=dict(net_arch=list(hidden)))
    if algorithm == "ddpg":
        return DDPG("MlpPolicy", env, **common)
    return TD3("MlpPolicy", env, policy_delay=2, target_policy_noise=0.2, target_noise_clip=0.5, **common)


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algorithm", choices=("ddpg", "td3"), default="ddpg")
    parser.add_argument("--env", default="adr/LunarLander-v0")
    parser.add_argument("--steps", type=int, default=5000, help="env steps (SB3 total_timesteps)")
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--hidden", type=int, nargs="+", default=[400, 300])
    parser.add_argument("--learning-starts", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    env = UniformDomainRandomization(make_env(args.env), args.seed)
    model = build_model(args.algorithm, env, args.batch, args.hidden, args.learning_starts, args.seed)
    started = time.perf_counter()
    model.learn(total_timesteps=args.steps)
    seconds = time.perf_counter() - started
    result = {"algorithm": args.algorithm, "steps": int(model.num_timesteps), "seconds": seconds,
              "steps_per_s": model.num_timesteps / seconds, "threads": torch.get_num_threads()}
    print(json.dumps(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
