"""What the learner costs per stored agent step for a preset's agent at other update-to-data ratios and batch sizes.

    python -m benchmarks.update_cost --config lunar_lander_adr_fast
    python -m benchmarks.update_cost --config ergo_reacher_adr_fast --cells 0.5:128 0.25:256 0.125:512 --json out.json

Each cell ``UTD:BATCH`` is the preset's agent (networks, algorithm, learning rates) with ``updates_per_step`` UTD and
``batch_size`` BATCH, on a synthetic replay of the env's sizes. The cells' gradient steps alternate in chunks of
``--chunk`` steps in one process, so a busy machine slows them alike; each cell's time per gradient step is the best
of ``--repeats`` chunks. Cost per stored step = UTD x time per gradient step; the ratio column is against the first
cell (the preset's own setting by default). It measures the learner only: whether a policy learns as fast per stored
step at another setting is what a training run says (experiments/preset_variants.yaml round 11).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import gymnasium as gym
import torch

from adr_core.agents import make_agent
from adr_core.base.devices import configure_torch
from adr_core.training.config import TrainConfig
from adr_core.training.experiments import resolve_experiment


def parse_cell(text: str) -> tuple[float, int]:
    try:
        utd, batch = text.split(":")
        return float(utd), int(batch)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a cell is UTD:BATCH (e.g. 0.25:512), got {text!r}") from None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="lunar_lander_adr_fast", help="packaged experiment name or YAML path")
    parser.add_argument("--cells", nargs="+", type=parse_cell, metavar="UTD:BATCH",
                        help="update-to-data ratio and batch size per cell (default: the preset's, then 1/2 and 1/4 "
                             "as many steps on 2x and 4x the batch)")
    parser.add_argument("--chunk", type=int, default=100, help="gradient steps per timed chunk")
    parser.add_argument("--repeats", type=int, default=5, help="chunks per cell (best one counts)")
    parser.add_argument("--json", help="write the cells to this file")
    args = parser.parse_args()

    config = TrainConfig.from_yaml(resolve_experiment(args.config))
    configure_torch(1, config.flush_denormals)
    agent_config = config.agent
    cells = args.cells or [(agent_config.updates_per_step * f, agent_config.batch_size * int(1 / f))
                           for f in (1.0, 0.5, 0.25)]
    env = gym.make(config.env_id)
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]  # type: ignore[index]
    env.close()
    agents = []
    for utd, batch in cells:
        cell_config = dataclasses.replace(agent_config, updates_per_step=utd, batch_size=batch,
                                          buffer_capacity=50_000, learning_starts=0)
        agent = make_agent(cell_config, obs_dim, act_dim, seed=0)
        rows = torch.randn(50_000, agent.replay.row_width, generator=torch.Generator().manual_seed(0))
        agent.replay.storage.copy_(rows.to(agent.replay.storage.device))
        agent.replay.size = 50_000
        agent.update(20)  # warm-up
        agents.append(agent)
    best = [float("inf")] * len(cells)
    for _ in range(args.repeats):
        for i, agent in enumerate(agents):
            started = time.perf_counter()
            agent.update(args.chunk)
            best[i] = min(best[i], (time.perf_counter() - started) / args.chunk)
    print(f"{config.env_id} ({args.config}): {agent_config.algorithm} {list(agent_config.hidden_sizes)}, "
          f"obs {obs_dim}, act {act_dim}, one torch thread")
    print("| updates per stored step | batch | ms per gradient step | ms of learner per stored step | vs first |")
    print("|---|---|---|---|---|")
    rows_out = []
    for (utd, batch), seconds in zip(cells, best):
        per_stored = utd * seconds
        ratio = (cells[0][0] * best[0]) / per_stored
        print(f"| {utd:g} | {batch} | {seconds * 1e3:.2f} | {per_stored * 1e3:.3f} | {ratio:.2f}x |")
        rows_out.append({"updates_per_step": utd, "batch_size": batch, "gradient_step_s": seconds,
                         "learner_s_per_stored_step": per_stored, "speedup_vs_first": ratio})
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"config": args.config, "cells": rows_out}, indent=2) + "\n")


if __name__ == "__main__":
    main()
