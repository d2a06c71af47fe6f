"""Tiny trained runs shared by the evaluation and report tests (built once per test session, a few seconds each).

No tests here: the helpers are imported by tests/core/test_evaluation*.py and test_report*.py.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
import torch

from adr_core.base.checkpoint import save_checkpoint
from adr_core.training.config import TrainConfig
from adr_core.training.trainer import Trainer

LUNAR_STEPS = 50  # episode limit of the tiny runs (keeps every evaluation episode short)
PUSHER_STEPS = 20
_ROOT: list[Path] = []  # set once per session by the ``tiny_runs`` fixture


def tiny_config(env_id: str, sampler: str, seed: int, steps: int) -> TrainConfig:
    return TrainConfig.from_dict({
        "env_id": env_id, "sampler": sampler, "seed": seed, "total_agent_steps": 300, "max_episode_steps": steps,
        "progress": False, "tensorboard": False, "checkpoint_every": 1, "keep_checkpoint_every": 1, "torch_threads": 1,
        "svpg": {"num_particles": 2},
        "agent": {"hidden_sizes": [16, 16], "batch_size": 16, "learning_starts": 100, "buffer_capacity": 2000},
        "discriminator": {"steps_per_transition": 0.05, "hidden_size": 16}})


@functools.cache
def trained_run(env_id: str = "adr/LunarLander-v0", sampler: str = "adr", seed: int = 0) -> Path:
    """An in-process run directory (config.yaml, metrics.csv, sampled_parameters.csv, checkpoints)."""
    steps = LUNAR_STEPS if "Lunar" in env_id else PUSHER_STEPS
    out = _ROOT[0] / f"{env_id.split('/')[-1]}_{sampler}_seed{seed}"
    previous = torch.get_num_threads()
    try:
        Trainer(tiny_config(env_id, sampler, seed, steps), out).run()
    finally:
        torch.set_num_threads(previous)
    return out


@functools.cache
def graph_style_run() -> Path:
    """A run directory laid out like a node-graph run: checkpoints/latest.json naming agent-<k>.pt (the trainer
    node's payload: counters, run identity and the agent, no sampler or discriminator)."""
    source = trained_run()
    out = _ROOT[0] / "graph_run"
    trainer = Trainer(TrainConfig.from_yaml(source / "config.yaml"), source, resume=True)
    k = trainer.iteration - 1
    payload = {"iteration": k, "agent_steps": trainer.agent_steps, "wall_time": 0.0,
               "config": trainer.config.to_dict(), "env_id": trainer.config.env_id, "space": trainer.space.to_dict(),
               "obs_dim": trainer.obs_dim, "act_dim": trainer.act_dim, "sampler_kind": trainer.config.sampler,
               "agent": trainer.agent.state_dict()}
    save_checkpoint(out / "checkpoints" / f"agent-{k:06d}.pt", payload)
    (out / "checkpoints" / "latest.json").write_text(
        json.dumps({"iteration": k, "files": {"agent": f"agent-{k:06d}.pt", "sampler": f"sampler-{k:06d}.pt"}}))
    for name in ("config.yaml", "metrics.csv", "sampled_parameters.csv"):
        (out / name).write_bytes((source / name).read_bytes())
    return out


@pytest.fixture(scope="session")
def tiny_runs(tmp_path_factory: pytest.TempPathFactory):
    """This module's builders, writing below one session temp folder (runs are built on first use and cached)."""
    if not _ROOT:
        _ROOT.append(tmp_path_factory.mktemp("tiny_runs"))
    return trained_run
