"""What ADR costs a stable-baselines3 learner: time per env step of SB3 SAC on adr/LunarLander-v0 without and with the
ADR loop (adr_core.ADRLoop + ADRWrapper + integrations.sb3.ADRCallback), and this project's trainer at the same budget.

    python -m benchmarks.adr_overhead                        # 20 000 steps per run, 2 rounds
    python -m benchmarks.adr_overhead --steps 5000 --rounds 1 --json runs/bench/adr_overhead.json

Each run is a fresh process with one torch thread, timed around ``model.learn`` (SB3) or the training loop (ours):
  sb3                SAC on the bare env (its own step time: the reference)
  sb3 + loop (udr)   the wrapper records every episode and the loop hands out uniform settings (no learning sampler)
  sb3 + loop (adr)   the paper's ADR: per batch of 10 episodes, 10 reference episodes with model.predict, the
                     discriminator scored then trained on the batch (``--disc-steps`` batches per transition; the
                     paper's 1.0 by default), the SVPG particles' step
  adr-train (adr)    this project's in-process trainer, SAC with SB3's sizes (256-256, batch 256, UTD 1), same ADR
                     settings, periodic evaluation and TensorBoard off
Same SAC hyperparameters everywhere (SB3 defaults: 256-256, batch 256, lr 3e-4, learning_starts 100, train_freq 1).
ADR overhead per env step = (t(sb3 + loop) - t(sb3)) / steps; the issue's goal: <= 10 % of SB3's own step time.
Runs are interleaved over rounds; medians are printed. Run on an otherwise idle machine.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SB3_CHILD = r"""
import json, sys, time
import torch
torch.set_num_threads(1)
from stable_baselines3 import SAC
from adr_core import ADRLoop, ADRWrapper
from adr_core.envs import make_env
from adr_core.integrations.sb3 import ADRCallback
from adr_core.training.config import TrainConfig
variant, steps, disc = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
env = make_env("adr/LunarLander-v0")
callback = None
if variant != "none":
    loop = ADRLoop.from_config(TrainConfig.from_dict({"env_id": "adr/LunarLander-v0", "sampler": variant, "seed": 0,
                                                      "discriminator": {"steps_per_transition": disc}}))
    env, callback = ADRWrapper(env, loop), ADRCallback(loop)
model = SAC("MlpPolicy", env, seed=0, verbose=0, device="cpu")
start = time.perf_counter()
model.learn(steps, callback=callback)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "updates": getattr(callback, "updates", 0)}))
"""


def run_sb3(variant: str, steps: int, disc: float) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", SB3_CHILD, variant, str(steps), str(disc)], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_ours(steps: int, disc: float, folder: Path) -> dict[str, float]:
    config = {"env_id": "adr/LunarLander-v0", "sampler": "adr", "seed": 0, "total_agent_steps": steps,
              "torch_threads": 1, "tensorboard": False, "progress": False, "evaluate_every": 0,
              "agent": {"algorithm": "sac", "hidden_sizes": [256, 256], "batch_size": 256, "learning_starts": 100,
                        "updates_per_step": 1.0, "actor_lr": 3e-4, "critic_lr": 3e-4, "tau": 0.005,
                        "buffer_capacity": 1_000_000, "exploration_noise": 1.0},
              "discriminator": {"steps_per_transition": disc}}
    path = folder / "config.json"
    path.write_text(json.dumps(config))
    child = ("import json, sys, time\n"
             "from adr_core.training.config import TrainConfig\n"
             "from adr_core.training.trainer import Trainer\n"
             "config = TrainConfig.from_dict(json.load(open(sys.argv[1])))\n"
             "trainer = Trainer(config, sys.argv[2])\n"
             "start = time.perf_counter(); trainer.run(); seconds = time.perf_counter() - start\n"
             "print(json.dumps({'seconds': seconds, 'steps': trainer.agent_steps}))\n")
    out = subprocess.run([sys.executable, "-c", child, str(path), str(folder / "run")], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20_000, help="env steps per run [20000]")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds [2]")
    parser.add_argument("--disc-steps", type=float, default=1.0,
                        help="discriminator batches per randomized transition [1.0, the paper's]")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    names = ("sb3", "sb3 + loop (udr)", "sb3 + loop (adr)", "adr-train (adr)")
    times: dict[str, list[float]] = {name: [] for name in names}
    extra: dict[str, list[float]] = {"adr updates": [], "ours steps": []}
    for _ in range(args.rounds):
        times["sb3"].append(run_sb3("none", args.steps, args.disc_steps)["seconds"])
        times["sb3 + loop (udr)"].append(run_sb3("udr", args.steps, args.disc_steps)["seconds"])
        adr = run_sb3("adr", args.steps, args.disc_steps)
        times["sb3 + loop (adr)"].append(adr["seconds"])
        extra["adr updates"].append(adr["updates"])
        with tempfile.TemporaryDirectory() as tmp:
            ours = run_ours(args.steps, args.disc_steps, Path(tmp))
        times["adr-train (adr)"].append(ours["seconds"] * args.steps / ours["steps"])  # per requested budget
        extra["ours steps"].append(ours["steps"])
    median = {name: statistics.median(values) for name, values in times.items()}
    base = median["sb3"] / args.steps
    print(f"SB3 SAC (256-256, batch 256, UTD 1) on adr/LunarLander-v0, {args.steps} env steps, {args.rounds} "
          f"round(s), discriminator {args.disc_steps:g} batch(es) per transition; medians\n")
    print("| run | total [s] | per env step [ms] | overhead per env step [ms] | overhead / SB3 step |")
    print("|---|---|---|---|---|")
    for name in names:
        per_step = median[name] / args.steps
        overhead = per_step - base
        share = "–" if name in ("sb3", "adr-train (adr)") else f"{100 * overhead / base:.1f} %"
        print(f"| {name} | {median[name]:.1f} | {1000 * per_step:.3f} | "
              f"{'–' if name == 'sb3' else f'{1000 * overhead:+.3f}'} | {share} |")
    print(f"\nADR iterations in the SB3 run: {extra['adr updates']}; adr-train ran {extra['ours steps']} agent steps "
          f"(scaled to the budget)")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"steps": args.steps, "disc_steps": args.disc_steps, "times": times,
                                               "extra": extra}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
