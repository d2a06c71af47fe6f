"""stable-baselines3 SAC on an env of this project, randomized through ``ADRWrapper`` by uniform DR or by this
project's ADR: one time-to-solve run (experiments/time_to_land.py runs it beside this project's preset).

    python -m experiments.sb3_robot --env adr/ErgoReacher-v0 --hyper defaults --seed 0 --json run.json
    python -m experiments.sb3_robot --env adr/LunarLander-v0 --hyper fast_lander --sampler adr --seed 400 \
        --max-minutes 12 --sweep-episodes 20 --json adr_s400.json     # ADR for any learner (issue 29), vs --sampler udr

``--hyper``:
  defaults      SB3 SAC as shipped (2.9.2): net [256, 256], lr 3e-4, batch 256, buffer 1e6, learning_starts 100,
                tau 0.005, gamma 0.99, train_freq 1, gradient_steps 1, ent_coef auto
  zoo_reacher   RL-zoo's SAC entry for ReacherBulletEnv-v0 (hyperparams/sac.yml, the PyBullet reacher closest to
                ErgoReacher; it inherits the "pybullet-defaults"): net [400, 300], lr 7.3e-4, buffer 300000, batch
                256, ent_coef auto, gamma 0.98, tau 0.02, train_freq 8, gradient_steps 8, learning_starts 10000,
                use_sde with log_std_init -3, n_timesteps 3e5
  zoo_mujoco    RL-zoo's MuJoCo defaults (the entry HalfCheetah/Ant/Hopper share; the zoo has no Pusher entry):
                SB3 defaults with learning_starts 10000, n_timesteps 1e6
  fast_lander   the sizes of this project's lunar_lander_adr_fast agent in SB3's SAC: net [64, 64], lr 7.3e-4
                decaying linearly to 0, batch 256, tau 0.01, buffer 300000, learning_starts 5000, one gradient step
                per two env steps (train_freq 2), ent_coef auto, n_timesteps 340000 (SB3 has no 3-step returns)
The env is ``adr_core.envs.make_env(--env)`` wrapped in ``ADRWrapper`` around an ``ADRLoop`` with ``--sampler``
(``udr``: uniform over the training range, new settings every episode; ``adr``: the paper's SVPG + discriminator,
the learner's current policy rolled out in the reference env for the discriminator) and ``ADRCallback``
(docs/adr_any_learner.md). ``--sweep-episodes N``: at the end the final policy also plays N episodes at 13 points
of each randomized dimension (others at the reference), like adr-report's generalization sweep.
Every ``--eval-every`` env steps the clock stops and the deterministic policy plays ``--eval-episodes`` reference
episodes (the same initial states as this project's runs: experiments/landing.py); the run ends at n_timesteps or
after ``--max-minutes`` of training time; then ``--final-episodes`` episodes of the final policy.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

from adr_core.cli_types import ArgumentParser
from experiments.landing import FINAL_SEED, evaluate_callable, first_landing

HYPER = {
    "defaults": {"n_timesteps": 1_000_000, "kwargs": {}},
    "zoo_reacher": {"n_timesteps": 300_000, "kwargs": dict(
        learning_rate=7.3e-4, buffer_size=300_000, batch_size=256, ent_coef="auto", gamma=0.98, tau=0.02,
        train_freq=8, gradient_steps=8, learning_starts=10_000, use_sde=True,
        policy_kwargs=dict(log_std_init=-3, net_arch=[400, 300]))},
    "zoo_mujoco": {"n_timesteps": 1_000_000, "kwargs": dict(learning_starts=10_000)},
    "fast_lander": {"n_timesteps": 340_000, "kwargs": dict(
        learning_rate=lambda progress: 7.3e-4 * progress, batch_size=256, tau=0.01, buffer_size=300_000,
        learning_starts=5_000, train_freq=2, gradient_steps=1, ent_coef="auto", policy_kwargs=dict(net_arch=[64, 64]))},
}


def sweep_callable(policy, env, points: int, episodes: int, seed: int) -> list[dict]:  # noqa: ANN001
    """Deterministic episodes at ``points`` values of each dimension of the env's training range (others at the
    reference): solved share and mean return per point."""
    from adr_core.rollout import rollout

    space = env.unwrapped.randomization_space
    rows = []
    for dim, name in enumerate(space.names):
        for i, unit in enumerate(np.linspace(0.0, 1.0, points)):
            normalized = np.array(space.reference_normalized(), dtype=np.float64)
            normalized[dim] = unit
            params = np.asarray(space.from_normalized(normalized[None]), dtype=np.float64).reshape(-1)
            runs = [rollout(env, policy, params=params, params_normalized=normalized, kind="reference",
                            iteration=10**6 + i, slot=episode, run_seed=seed) for episode in range(episodes)]
            rows.append({"dimension": name, "value": float(params[dim]),
                         "return_mean": float(np.mean([t.episode_return for t in runs])),
                         "solved": float(np.mean([t.solved for t in runs]))})
    return rows


def main(argv: list[str] | None = None) -> int:
    from stable_baselines3 import SAC
    from stable_baselines3.common.callbacks import CallbackList

    from adr_core import ADRLoop, ADRWrapper
    from adr_core.envs import make_env
    from adr_core.integrations.sb3 import ADRCallback
    from adr_core.training.config import TrainConfig
    from experiments.sb3_clock import EvaluationClock

    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="adr/ErgoReacher-v0")
    parser.add_argument("--hyper", choices=sorted(HYPER), default="defaults")
    parser.add_argument("--sampler", choices=("udr", "adr"), default="udr")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sweep-episodes", type=int, default=0, help="episodes per sweep point at the end [0: none]")
    parser.add_argument("--eval-every", type=int, default=10_000)
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--final-episodes", type=int, default=50)
    parser.add_argument("--max-minutes", type=float, default=30.0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    loop = ADRLoop.from_config(TrainConfig(env_id=args.env, sampler=args.sampler, seed=args.seed))
    train_env, eval_env = ADRWrapper(make_env(args.env), loop), make_env(args.env)
    model = SAC("MlpPolicy", train_env, seed=args.seed, device="cpu", verbose=0, **HYPER[args.hyper]["kwargs"])

    def policy(obs: np.ndarray) -> np.ndarray:
        return model.predict(obs, deterministic=True)[0]

    clock = EvaluationClock(policy, eval_env, eval_every=args.eval_every, eval_episodes=args.eval_episodes,
                            max_minutes=args.max_minutes, label=f"sb3 sac {args.hyper} {args.sampler} s{args.seed}")

    n_timesteps = HYPER[args.hyper]["n_timesteps"]
    model.learn(total_timesteps=n_timesteps, callback=CallbackList([ADRCallback(loop), clock]))
    train_s, curve = clock.training_seconds(), clock.curve
    final = evaluate_callable(policy, args.final_episodes, FINAL_SEED, eval_env)
    sweep = sweep_callable(policy, eval_env, 13, args.sweep_episodes, FINAL_SEED) if args.sweep_episodes else []
    result = {"name": f"sb3_sac_{args.hyper}" + ("_adr" if args.sampler == "adr" else ""), "env_id": args.env,
              "sampler": args.sampler, "seed": args.seed, "sweep": sweep,
              "agent_steps": int(model.num_timesteps), "train_s": train_s, "evaluation_s": clock.evaluating,
              "threads": args.threads, "stopped": "budget" if model.num_timesteps >= n_timesteps else "time cap",
              "curve": curve, "landed": first_landing(curve, args.env), "final_return_mean": final["return_mean"],
              "final_solved": final["solved_fraction"]}
    args.json.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
