"""A policy with memory on the arm: exported to ONNX with its history in the spec, run by the policy runner (which
keeps the history, no torch), acting like its checkpoint step by step; a spec whose history does not match is
refused before any command."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from adr_core.agents.networks import Actor, ActorPolicy
from adr_core.base.checkpoint import save_checkpoint
from adr_core.base.history import HistorySpec
from adr_core.envs import make_env
from adr_core.export import export_policy
from adr_core.randomization import load_space
from adr_core.rollout import rollout
from adr_deploy.policy_runner.errors import DeployError
from adr_deploy.policy_runner.loading import WithHistory, load_deployable

PUSHER = "adr/ErgoPusher-v0"
HISTORY = HistorySpec.for_env(3, 17, 4, goal=(15, 17))


def memory_checkpoint(folder: Path) -> Path:
    with torch.random.fork_rng():
        torch.manual_seed(4)
        actor = Actor(17, 4, (32, 32), gaussian=True, history=HISTORY)
    payload = {"env_id": PUSHER, "space": load_space(PUSHER).to_dict(), "obs_dim": 17, "act_dim": 4, "iteration": 3,
               "agent_steps": 600, "config": {"max_episode_steps": 30}, "agent": {"actor": actor.state_dict()}}
    save_checkpoint(folder / "checkpoints" / "latest.pt", payload)
    return folder


@pytest.fixture()
def exported(tmp_path: Path) -> Path:
    run = memory_checkpoint(tmp_path / "run")
    return export_policy(run, "onnx", tmp_path / "export").parent


def test_the_export_carries_the_history_and_acts_like_the_checkpoint_on_recorded_episodes(exported: Path) -> None:
    spec = json.loads((exported / "policy_spec.json").read_text())
    assert spec["history"] == HISTORY.to_json() and spec["input_dim"] == 17 + 3 * 19
    deployable = load_deployable(exported)
    assert isinstance(deployable.policy, WithHistory) and deployable.kind == "onnx"
    checkpoint = ActorPolicy.from_state_dict(torch.load(exported.parent / "run" / "checkpoints" / "latest.pt",
                                                        weights_only=True)["agent"]["actor"])
    env = make_env(PUSHER, max_episode_steps=30)
    space = env.unwrapped.randomization_space
    worst = 0.0
    for episode in range(3):  # recorded with the checkpoint, replayed through the runner's program and history
        recorded = rollout(env, checkpoint, params=space.reference(), params_normalized=space.reference_normalized(),
                           kind="reference", iteration=0, slot=episode, run_seed=9)
        deployable.policy.begin_episode(recorded.obs[0])
        for obs, action in zip(recorded.obs, recorded.actions):
            acted = np.clip(deployable.policy(obs), -1, 1)
            worst = max(worst, float(np.abs(acted - action).max()))
            deployable.policy.remember(obs, action)
    assert worst < 1e-5
    # a memoryless replay of the same program acts differently: the history is what it reads
    deployable.policy.begin_episode(recorded.obs[0])
    assert np.abs(deployable.policy(recorded.obs[-1]) - recorded.actions[-1]).max() > 1e-4


@pytest.mark.parametrize("change, message", [
    ({"history": {**HISTORY.to_json(), "steps": 2}}, "does not match the spec's 74 inputs"),
    ({"history": None}, "reads 74 values per step but the spec names no history"),
    ({"history": None, "input_dim": 17}, "reads 74 values per step but .* describes 17"),
    ({"history": {**HISTORY.to_json(), "index": [0, 99]}}, "distinct components"),
])
def test_a_spec_whose_history_does_not_match_is_refused(exported: Path, change: dict, message: str) -> None:
    spec = json.loads((exported / "policy_spec.json").read_text())
    (exported / "policy_spec.json").write_text(json.dumps({**spec, **change}))
    with pytest.raises(DeployError, match=message):
        load_deployable(exported)
