"""Parity of this project's DDPG and TD3 with stable-baselines3's, identical hyperparameters, same loop shape.

    make bench-setup                                    # once: stable-baselines3 into .venv
    python -m experiments.parity --seeds 0 1 2 --parallel 2 --out runs/parity        # ~40 min on 2 cores
    python -m experiments.parity --out runs/parity --report-only                    # table + figure again

Both sides run the textbook off-policy loop (SB3's OffPolicyAlgorithm with train_freq 1, gradient_steps 1): one env
step, store it, one gradient step once ``learning_starts`` steps are stored; uniform random actions before that,
then the deterministic action plus Gaussian noise (std 0.1 of the [-1, 1] range). Ours drives ``adr_core.agents``
(``act``/``store``/``update``) directly; actions are rescaled to the env's range on both sides (SB3 does it inside
its policy, ours through gymnasium's RescaleAction). Hyperparameters (both): actor and critic ``--hidden`` ReLU,
Adam 1e-3, batch 256, tau 0.005, gamma 0.99, replay 1e6, learning_starts 1000 (Pendulum) / 10000 (LunarLander);
TD3: policy delay 2, target noise 0.2 clipped at 0.5. Every ``--eval-every`` steps the deterministic policy plays
``--eval-episodes`` episodes with the same reset seeds on both sides.

Rule for "equal within noise", fixed before any run: per (env, algorithm) and side, two numbers per seed: AUC (mean
evaluation return over all evaluation points) and FINAL (mean over the last three points). A pair is equal within
noise when, for both numbers, |mean_ours - mean_sb3| <= 2 * sqrt(sd_ours^2 / n_ours + sd_sb3^2 / n_sb3).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from adr_core.cli_types import ArgumentParser
from experiments import cluster, runner

ENVS = {"Pendulum-v1": {"steps": 20_000, "learning_starts": 1000, "eval_every": 1000},
        "LunarLanderContinuous-v3": {"steps": 150_000, "learning_starts": 10_000, "eval_every": 10_000}}
ALGORITHMS = ("ddpg", "td3")
SIDES = ("ours", "sb3")
LR, BATCH, TAU, GAMMA, NOISE = 1e-3, 256, 0.005, 0.99, 0.1


def make_env(env_id: str):
    import gymnasium as gym

    return gym.wrappers.RescaleAction(gym.make(env_id), -1.0, 1.0)


def evaluate(act, env, episodes: int) -> float:
    returns = []
    for episode in range(episodes):
        obs, _ = env.reset(seed=10_000 + episode)
        done, total = False, 0.0
        while not done:
            obs, reward, terminated, truncated, _ = env.step(act(obs))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    return float(np.mean(returns))


def run_ours(job: dict) -> list[tuple[int, float]]:
    import torch

    from adr_core.agents import AgentConfig, make_agent
    from adr_core.rollout import Trajectory

    env, eval_env = make_env(job["env"]), make_env(job["env"])
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    config = AgentConfig(algorithm=job["algorithm"], hidden_sizes=tuple(job["hidden"]), actor_lr=LR, critic_lr=LR,
                         tau=TAU, gamma=GAMMA, batch_size=BATCH, learning_starts=job["learning_starts"],
                         updates_per_step=1.0, exploration_noise=NOISE, buffer_capacity=1_000_000)
    agent = make_agent(config, obs_dim, act_dim, seed=job["seed"])
    rng = np.random.default_rng(job["seed"])
    env.action_space.seed(job["seed"])
    obs, _ = env.reset(seed=job["seed"])
    curve = []
    zero = np.zeros(1)
    for step in range(1, job["steps"] + 1):
        if step <= job["learning_starts"]:
            action = env.action_space.sample()
        else:
            action = np.clip(agent.act(obs) + rng.normal(0.0, NOISE, act_dim), -1.0, 1.0).astype(np.float32)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        agent.store(Trajectory(obs=np.asarray([obs], np.float32), actions=np.asarray([action], np.float32),
                               next_obs=np.asarray([next_obs], np.float32), rewards=np.asarray([reward], np.float32),
                               terminated=np.asarray([terminated]), params=zero, params_normalized=zero,
                               kind="randomized", iteration=0, slot=0, policy_version=0, episode_return=0.0,
                               length=1))
        if agent.updates_due():
            agent.update(agent.updates_due())
        obs = next_obs
        if terminated or truncated:
            obs, _ = env.reset()
        if step % job["eval_every"] == 0:
            curve.append((step, evaluate(lambda o: agent.act(np.asarray(o, np.float32)), eval_env,
                                         job["eval_episodes"])))
    del torch
    return curve


def run_sb3(job: dict) -> list[tuple[int, float]]:
    from stable_baselines3 import DDPG, TD3
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.noise import NormalActionNoise

    env, eval_env = make_env(job["env"]), make_env(job["env"])
    act_dim = env.action_space.shape[0]
    common = dict(learning_rate=LR, buffer_size=1_000_000, learning_starts=job["learning_starts"], batch_size=BATCH,
                  tau=TAU, gamma=GAMMA, train_freq=1, gradient_steps=1, seed=job["seed"], device="cpu", verbose=0,
                  action_noise=NormalActionNoise(np.zeros(act_dim), NOISE * np.ones(act_dim)),
                  policy_kwargs=dict(net_arch=list(job["hidden"])))
    model = (DDPG("MlpPolicy", env, **common) if job["algorithm"] == "ddpg" else
             TD3("MlpPolicy", env, policy_delay=2, target_policy_noise=0.2, target_noise_clip=0.5, **common))
    curve = []

    class Evaluate(BaseCallback):
        def _on_step(self) -> bool:
            if self.num_timesteps % job["eval_every"] == 0:
                curve.append((self.num_timesteps, evaluate(lambda o: model.predict(o, deterministic=True)[0],
                                                           eval_env, job["eval_episodes"])))
            return True

    model.learn(total_timesteps=job["steps"], callback=Evaluate())
    return curve


def run_job(job: dict) -> dict:
    import torch

    torch.set_num_threads(1)
    started = time.perf_counter()
    curve = (run_ours if job["side"] == "ours" else run_sb3)(job)
    return {**job, "curve": curve, "seconds": time.perf_counter() - started}


def judge(results: list[dict]) -> list[dict]:
    rows = []
    for env_id in ENVS:
        for algorithm in ALGORITHMS:
            stats = {}
            for side in SIDES:
                runs = [r for r in results if (r["env"], r["algorithm"], r["side"]) == (env_id, algorithm, side)]
                if not runs:
                    continue
                auc = [np.mean([v for _, v in r["curve"]]) for r in runs]
                final = [np.mean([v for _, v in r["curve"][-3:]]) for r in runs]
                stats[side] = {"n": len(runs), "auc": auc, "final": final}
            if len(stats) < 2:
                continue
            verdict = {}
            for key in ("auc", "final"):
                a, b = np.array(stats["ours"][key]), np.array(stats["sb3"][key])
                se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b)) if min(len(a), len(b)) > 1 else math.inf
                verdict[key] = {
                    "ours": float(a.mean()),
                    "sb3": float(b.mean()),
                    "difference": float(a.mean() - b.mean()),
                    "bound": 2 * se,
                    "equal": abs(a.mean() - b.mean()) <= 2 * se,
                }
            rows.append({"env": env_id, "algorithm": algorithm, "seeds": [stats["ours"]["n"], stats["sb3"]["n"]],
                         **verdict, "equal_within_noise": verdict["auc"]["equal"] and verdict["final"]["equal"]})
    return rows


def report(results: list[dict], out: Path) -> str:
    rows = judge(results)
    lines = ["| env | algorithm | seeds (ours, SB3) | AUC ours | AUC SB3 | final ours | final SB3 | 2 SE (AUC, final) "
             "| equal within noise |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['env']} | {r['algorithm']} | {r['seeds'][0]}, {r['seeds'][1]} | {r['auc']['ours']:.0f} | "
                     f"{r['auc']['sb3']:.0f} | {r['final']['ours']:.0f} | {r['final']['sb3']:.0f} | "
                     f"{r['auc']['bound']:.0f}, {r['final']['bound']:.0f} | "
                     f"{'yes' if r['equal_within_noise'] else 'NO'} |")
    seconds = {side: [r["seconds"] for r in results if r["side"] == side] for side in SIDES}
    lines.append("")
    lines.append("Wall time per run (s, median): " + ", ".join(
        f"{side} {np.median(s):.0f}" for side, s in seconds.items() if s))
    (out / "parity.json").write_text(json.dumps({"judgement": rows}, indent=1, default=float))
    _figure(results, out / "parity.png")
    return "\n".join(lines) + "\n"


def _figure(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(ENVS), len(ALGORITHMS), figsize=(10, 7), squeeze=False)
    for i, env_id in enumerate(ENVS):
        for j, algorithm in enumerate(ALGORITHMS):
            ax = axes[i][j]
            for side, color in (("ours", "tab:blue"), ("sb3", "tab:red")):
                runs = [r for r in results if (r["env"], r["algorithm"], r["side"]) == (env_id, algorithm, side)]
                for k, r in enumerate(runs):
                    steps, values = zip(*r["curve"])
                    ax.plot(np.array(steps) / 1000, values, color=color, alpha=0.7, lw=1,
                            label=f"{side} ({len(runs)} seeds)" if k == 0 else None)
            ax.set_title(f"{env_id}, {algorithm}", fontsize=9)
            ax.set_xlabel("env steps (k)")
            ax.set_ylabel("evaluation return")
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def key(result: dict) -> tuple[str, str, str, int]:
    return result["env"], result["algorithm"], result["side"], result["seed"]


def print_result(result: dict) -> None:
    print(f"{result['env']} {result['algorithm']} {result['side']} s{result['seed']}: final "
          f"{result['curve'][-1][1]:.0f} ({result['seconds']:.0f} s)", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", nargs="+", default=list(ENVS), choices=list(ENVS))
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS), choices=ALGORITHMS)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--hidden", type=int, nargs="+", default=[64, 64], help="actor and critic layers (both sides)")
    parser.add_argument("--steps", type=int, default=None, help="env steps per run (default: per env)")
    parser.add_argument("--eval-episodes", type=int, default=5)
    runner.add_arguments(parser, parallel_help="runs at a time (one torch thread each)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    where = cluster.options(args, parser)  # checked before anything is written (--out included)
    args.out.mkdir(parents=True, exist_ok=True)  # the runs write their logs into it
    results_file = args.out / "runs.jsonl"
    if args.report_only:
        results = runner.finished(results_file, key)
    else:
        jobs = [{"env": e, "algorithm": a, "side": side, "seed": s, "hidden": args.hidden,
                 "steps": args.steps or ENVS[e]["steps"], "learning_starts": ENVS[e]["learning_starts"],
                 "eval_every": ENVS[e]["eval_every"], "eval_episodes": args.eval_episodes}
                for e in args.envs for s in args.seeds for a in args.algorithms for side in SIDES]
        results = runner.run(jobs, run_job, key=key, results=results_file, parallel=args.parallel,
                             on_result=print_result, cluster=where)
    text = report(results, args.out)
    (args.out / "parity.md").write_text(text)
    print(text)
    return 0 if args.report_only else runner.exit_code(jobs, key, results_file)


if __name__ == "__main__":
    sys.exit(main())
