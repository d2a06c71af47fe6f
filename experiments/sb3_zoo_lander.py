"""stable-baselines3 TD3 or SAC with RL-zoo's tuned hyperparameters for LunarLanderContinuous: one time-to-land run.

    python -m experiments.sb3_zoo_lander --algorithm sac --seed 0 --json run.json [--max-minutes 60] [--threads 2]

RL-zoo (DLR-RM/rl-baselines3-zoo, hyperparams/td3.yml and sac.yml, LunarLanderContinuous-v2 entries; v3 differs
from v2 only in bug fixes of the env):
  TD3: n_timesteps 3e5, net_arch [400, 300], gamma 0.98, buffer_size 200000, learning_starts 10000,
       normal action noise std 0.1, learning_rate 1e-3, train_freq (1, "episode"), gradient_steps -1
       (as many steps as the episode had), SB3 defaults otherwise (batch 256, tau 0.005, policy delay 2).
  SAC: n_timesteps 5e5, net_arch [400, 300], batch_size 256, learning_rate lin_7.3e-4 (linear to 0 over
       n_timesteps), buffer_size 1e6, ent_coef auto, gamma 0.99, tau 0.01, train_freq 1, gradient_steps 1,
       learning_starts 10000.
The env is this project's adr/LunarLander-v0 at its reference engine (13.0), which is LunarLanderContinuous-v3 step
for step. Every ``--eval-every`` env steps the clock stops and the deterministic policy plays ``--eval-episodes``
reference episodes (experiments/landing.py: the episodes this project's runs are evaluated on). The run ends at the
zoo's n_timesteps or after ``--max-minutes`` of training time, whichever comes first; then ``--final-episodes``
episodes of the final policy. Training time: seconds inside ``learn()`` minus the evaluations.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

from adr_core.cli_types import ArgumentParser
from experiments.landing import ENV_ID, FINAL_SEED, evaluate_callable, first_landing

ZOO = {
    "td3": {"n_timesteps": 300_000, "kwargs": dict(gamma=0.98, buffer_size=200_000, learning_starts=10_000,
                                                   learning_rate=1e-3, train_freq=(1, "episode"), gradient_steps=-1,
                                                   policy_kwargs=dict(net_arch=[400, 300]))},
    "sac": {"n_timesteps": 500_000, "kwargs": dict(batch_size=256, buffer_size=1_000_000, ent_coef="auto",
                                                   gamma=0.99, tau=0.01, train_freq=1, gradient_steps=1,
                                                   learning_starts=10_000, policy_kwargs=dict(net_arch=[400, 300]))},
}


def build(algorithm: str, env, seed: int):
    from stable_baselines3 import SAC, TD3
    from stable_baselines3.common.noise import NormalActionNoise

    kwargs = dict(ZOO[algorithm]["kwargs"], seed=seed, device="cpu", verbose=0)
    if algorithm == "td3":
        act_dim = env.action_space.shape[0]
        return TD3("MlpPolicy", env, action_noise=NormalActionNoise(np.zeros(act_dim), 0.1 * np.ones(act_dim)),
                   **kwargs)
    return SAC("MlpPolicy", env, learning_rate=lambda progress_remaining: 7.3e-4 * progress_remaining, **kwargs)


def main(argv: list[str] | None = None) -> int:
    from adr_core.envs import make_env
    from experiments.sb3_clock import EvaluationClock

    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algorithm", choices=sorted(ZOO), required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-every", type=int, default=10_000)
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--final-episodes", type=int, default=30)
    parser.add_argument("--max-minutes", type=float, default=60.0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    train_env, eval_env = make_env(ENV_ID), make_env(ENV_ID)
    model = build(args.algorithm, train_env, args.seed)

    def policy(obs: np.ndarray) -> np.ndarray:
        return model.predict(obs, deterministic=True)[0]

    clock = EvaluationClock(policy, eval_env, eval_every=args.eval_every, eval_episodes=args.eval_episodes,
                            max_minutes=args.max_minutes, label=f"sb3 {args.algorithm} s{args.seed}")

    model.learn(total_timesteps=ZOO[args.algorithm]["n_timesteps"], callback=clock)
    train_s, curve = clock.training_seconds(), clock.curve
    final = evaluate_callable(policy, args.final_episodes, FINAL_SEED, eval_env)
    result = {"name": f"sb3_{args.algorithm}", "seed": args.seed, "agent_steps": int(model.num_timesteps),
              "train_s": train_s, "evaluation_s": clock.evaluating, "threads": args.threads,
              "stopped": "budget" if model.num_timesteps >= ZOO[args.algorithm]["n_timesteps"] else "time cap",
              "curve": curve, "landed": first_landing(curve), "final_return_mean": final["return_mean"],
              "final_solved": final["solved_fraction"]}
    args.json.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
