"""adr-export: ONNX and TorchScript programs of a run's actor, equal to it, with their spec."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from test_evaluation_support import tiny_config, tiny_runs  # noqa: F401

from adr_core import export as export_module
from adr_core.evaluation.policies import load_policy
from adr_core.export import agreement, check_inputs, main, run_exported
from adr_core.training.config import TrainConfig
from adr_core.training.trainer import Trainer


@pytest.mark.parametrize("fmt,program", [("onnx", "policy.onnx"), ("torchscript", "policy.pt")])
def test_export_writes_a_program_equal_to_the_actor_and_its_spec(tiny_runs, tmp_path, fmt, program, capsys):
    run = tiny_runs("adr/LunarLander-v0", "adr", 0)
    assert main([str(run), "--format", fmt, "--out", str(tmp_path)]) == 0
    spec = json.loads((tmp_path / "policy_spec.json").read_text())
    assert (spec["program"], spec["env_id"], spec["obs_dim"], spec["act_dim"]) == (program, "adr/LunarLander-v0", 8, 2)
    assert (spec["input_dim"], spec["history"]) == (8, None) and spec["check_inputs"] > 100
    trained = load_policy(run)
    inputs = check_inputs(trained, episodes=2, seed=11)
    actor = trained.policy().actor
    error, allowed = agreement(actor, run_exported(tmp_path / program, fmt, inputs), inputs)
    assert error <= allowed < 1e-5
    assert "largest error against the actor in float64" in capsys.readouterr().out


@pytest.mark.parametrize("env_id", ["adr/LunarLander-v0", "adr/Pusher3DOF-v0", "adr/ErgoReacher-v0",
                                    "adr/ErgoPusher-v0"])
def test_a_trained_policy_of_every_env_exports(tiny_runs, tmp_path, env_id):
    """Each env's policy exports; the check inputs are the actor's own episodes (its env's scale, not N(0, 4))."""
    run = tiny_runs(env_id, "udr", 0)
    assert main([str(run), "--format", "onnx", "--out", str(tmp_path)]) == 0
    spec = json.loads((tmp_path / "policy_spec.json").read_text())
    assert spec["env_id"] == env_id and spec["max_error"] >= 0.0
    inputs = check_inputs(load_policy(run), episodes=2)
    obs_dim = spec["obs_dim"]
    assert inputs.shape[1] == obs_dim
    if "Ergo" in env_id:  # scaled joint angles lie within [-1.3, 1.3]: the check stays where observations are
        assert np.abs(inputs[:, :4]).max() < 1.3


def test_a_program_that_does_not_compute_the_actor_is_refused(tiny_runs, tmp_path, monkeypatch, capsys):
    run = tiny_runs("adr/LunarLander-v0", "adr", 0)
    real = export_module.run_exported
    monkeypatch.setattr(export_module, "run_exported", lambda *a: real(*a) + np.float32(3e-4))
    assert main([str(run), "--format", "onnx", "--out", str(tmp_path / "out")]) == 2
    assert "more than float32 precision allows" in capsys.readouterr().err
    assert not any((tmp_path / "out").iterdir())


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
    inputs = check_inputs(load_policy(run), episodes=2, seed=3)
    error, allowed = agreement(actor, run_exported(tmp_path / "export" / "policy.onnx", "onnx", inputs), inputs)
    assert error <= allowed
