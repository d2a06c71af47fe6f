"""adr-export: ONNX and TorchScript programs of a run's actor, equal to it, with their spec."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from test_evaluation_support import tiny_config, tiny_runs  # noqa: F401

from adr_core.evaluation.policies import load_policy
from adr_core.export import check_observations, main, run_exported
from adr_core.training.config import TrainConfig
from adr_core.training.trainer import Trainer


@pytest.mark.parametrize("fmt,program", [("onnx", "policy.onnx"), ("torchscript", "policy.pt")])
def test_export_writes_a_program_equal_to_the_actor_and_its_spec(tiny_runs, tmp_path, fmt, program, capsys):
    run = tiny_runs("adr/LunarLander-v0", "adr", 0)
    assert main([str(run), "--format", fmt, "--out", str(tmp_path)]) == 0
    spec = json.loads((tmp_path / "policy_spec.json").read_text())
    assert (spec["program"], spec["env_id"], spec["obs_dim"], spec["act_dim"]) == (program, "adr/LunarLander-v0", 8, 2)
    assert spec["max_abs_difference"] <= 1e-5
    observations = check_observations(8, seed=11)
    actor = load_policy(run).policy().actor
    with torch.no_grad():
        expected = actor(torch.from_numpy(observations)).numpy()
    assert np.abs(run_exported(tmp_path / program, fmt, observations) - expected).max() <= 1e-5
    assert "max difference to the actor" in capsys.readouterr().out


def test_export_of_something_that_is_not_a_run_is_one_clear_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:  # refused by the argument's check, before anything runs
        main([str(tmp_path / "nowhere"), "--format", "onnx"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("adr-export: error:") and "nowhere: no such file or folder" in error  # one line
    assert len(error.strip().splitlines()) == 1


def test_export_of_an_actor_that_normalizes_its_observations_carries_the_normalization(tmp_path):
    config = tiny_config("adr/ErgoPusher-v0", "udr", 0, 20).to_dict()
    config["agent"]["normalize_observations"] = True
    run = tmp_path / "run"
    previous = torch.get_num_threads()
    try:
        Trainer(TrainConfig.from_dict(config), run).run()
    finally:
        torch.set_num_threads(previous)
    actor = load_policy(run).policy().actor
    assert actor.normalizes and float(actor.obs_scale.min()) > 1.5  # fitted: ErgoPusher's positions vary by cm
    assert main([str(run), "--format", "onnx", "--out", str(tmp_path / "export")]) == 0
    observations = check_observations(actor.obs_dim, seed=3)
    with torch.no_grad():
        expected = actor(torch.from_numpy(observations)).numpy()
    assert np.abs(run_exported(tmp_path / "export" / "policy.onnx", "onnx", observations) - expected).max() <= 1e-5
