"""The run configurations kept beside the experiment drivers (experiments/*.yaml with an env_id) load as adr-train
loads them, and the Pusher3DOF claims grid's agent is the ErgoReacher fast preset's, as its file says."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from adr_core.envs.registry import env_record
from adr_core.training.cli import resolve_experiment
from adr_core.training.config import TrainConfig

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
RUN_CONFIGS = sorted(p for p in EXPERIMENTS.glob("*.yaml") if "env_id" in (yaml.safe_load(p.read_text()) or {}))


def test_the_run_configs_are_found() -> None:
    assert {p.name for p in RUN_CONFIGS} >= {"pusher3dof_fast_agent.yaml", "lunar_lander_adr_fast_confirm.yaml"}


@pytest.mark.parametrize("path", RUN_CONFIGS, ids=lambda p: p.stem)
def test_a_run_config_loads_for_a_registered_env(path: Path) -> None:
    config = TrainConfig.from_yaml(path)
    assert env_record(config.env_id).env_id == config.env_id


def test_the_pusher_grid_agent_is_the_ergo_reacher_fast_preset_on_pusher3dof() -> None:
    pusher = TrainConfig.from_yaml(EXPERIMENTS / "pusher3dof_fast_agent.yaml").to_dict()
    reacher = TrainConfig.from_yaml(resolve_experiment("ergo_reacher_adr_fast")).to_dict()
    assert (pusher.pop("env_id"), reacher.pop("env_id")) == ("adr/Pusher3DOF-v0", "adr/ErgoReacher-v0")
    assert pusher == reacher
