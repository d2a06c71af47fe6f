"""Where an ADR iteration spends its time, at the paper's settings (or a packaged experiment).

    python -m benchmarks.adr_iteration [--config lunar_lander_adr] [--iterations 3] [--threads N]

Runs one warm-up iteration (fills the replay past learning_starts), then times ``--iterations`` iterations of
the in-process trainer: rollouts (randomized + reference), discriminator scoring, agent updates, SVPG update,
discriminator training. Prints per-phase seconds, the share of each phase, and a projection to 1M agent steps.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from adr_core.training.config import TrainConfig
from adr_core.training.experiments import resolve_experiment
from adr_core.training.trainer import Trainer

PHASES = (("time_rollouts_s", "rollouts (randomized + reference)"),
          ("time_discriminator_s", "discriminator scoring and training"), ("time_agent_s", "agent updates"),
          ("time_sampler_s", "SVPG update"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="lunar_lander_adr", help="packaged experiment name or YAML path")
    parser.add_argument("--iterations", type=int, default=3, help="timed iterations after the warm-up")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(), help="torch intra-op threads")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override (YAML value)")
    args = parser.parse_args()

    import yaml
    config = TrainConfig.from_yaml(resolve_experiment(args.config))
    overrides = {k: yaml.safe_load(v) for k, v in (s.split("=", 1) for s in args.set)}
    config = config.with_overrides({**overrides, "progress": False, "torch_threads": args.threads,
                                    "total_agent_steps": 10**9})
    trainer = Trainer(config, None)
    print(
        f"{config.env_id}, sampler {config.sampler}, {config.num_particles} particles, batch "
        f"{config.agent.batch_size}, hidden {list(config.agent.hidden_sizes)}, torch threads {torch.get_num_threads()}"
    )
    start = time.perf_counter()
    while trainer.agent_steps <= config.agent.learning_starts:
        trainer.run_iteration()
    print(f"warm-up: {trainer.iteration} iteration(s), {trainer.agent_steps} steps, "
          f"{time.perf_counter() - start:.1f} s")

    rows = []
    for _ in range(args.iterations):
        before = trainer.agent_steps
        row = trainer.run_iteration().metrics()
        row["steps"] = trainer.agent_steps - before
        rows.append(row)
        print(f"  iteration {row['iteration']}: {row['steps']} agent steps, {row['n_updates']} updates, "
              f"{row['time_iteration_s']:.2f} s")
    total = sum(r["time_iteration_s"] for r in rows)
    steps = sum(r["steps"] for r in rows)
    print(f"\n{args.iterations} iterations, {steps} agent steps, {total:.2f} s "
          f"({total / steps * 1e3:.2f} ms per agent step)")
    for key, label in PHASES:
        seconds = sum(r[key] for r in rows)
        print(f"  {label:34s} {seconds:8.2f} s  {100 * seconds / total:5.1f} %  "
              f"{seconds / steps * 1e3:7.3f} ms/agent step")
    print(f"projection to 1M agent steps: {total / steps * 1e6 / 3600:.1f} h")
    print(f"mean episode length {np.mean([r['length_mean'] for r in rows]):.0f}")


if __name__ == "__main__":
    main()
