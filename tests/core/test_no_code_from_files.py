"""A file never makes a tool import code (issue 47): env modules named in a checkpoint or a run's config.yaml are
imported only when the env is registered already (then nothing is imported) or the user named them (--env-modules,
$ADR_ENV_MODULES). Checked with a module whose import leaves a mark on disk, through every tool that reads such
files: adr-evaluate, adr-export, adr-report, adr-probe and the deploy runner's loader."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from adr_core.agents.networks import Actor
from adr_core.base.checkpoint import save_checkpoint
from adr_core.evaluation.policies import CheckpointError, load_policy
from adr_core.randomization import load_space

MODULE = "adr_side_effect_probe"


@pytest.fixture
def side_effect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    """A module on the path whose import writes ``marker``; the environment for tools that should see it."""
    modules, marker = tmp_path / "modules", tmp_path / "imported.txt"
    modules.mkdir()
    (modules / f"{MODULE}.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\n")
    monkeypatch.syspath_prepend(str(modules))
    monkeypatch.delenv("ADR_ENV_MODULES", raising=False)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(modules), os.environ.get("PYTHONPATH", "")])}
    env.pop("ADR_ENV_MODULES", None)
    return marker, env


def write_run(run: Path, env_id: str, space_env: str = "adr/ErgoReacher-v0") -> Path:
    """A run directory whose checkpoint and config.yaml name the side-effect module in env_modules."""
    actor = Actor(10, 4, (8, 8))
    config = {"env_id": env_id, "env_modules": [MODULE], "sampler": "udr", "seed": 0}
    save_checkpoint(run / "checkpoints" / "latest.pt", {
        "env_id": env_id, "space": load_space(space_env).to_dict(), "obs_dim": 10, "act_dim": 4, "iteration": 1,
        "agent_steps": 10, "config": config, "agent": {"actor": actor.state_dict()}})
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    (run / "metrics.csv").write_text("iteration,agent_steps\n0,10\n")
    (run / "sampled_parameters.csv").write_text("iteration\n")
    return run


def run_tool(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180)


def test_a_checkpoint_of_an_unregistered_env_names_a_module_that_is_refused_by_every_tool(tmp_path, side_effect):
    marker, env = side_effect
    run = write_run(tmp_path / "run", "toy/Nowhere-v0")
    commands = {
        "adr-evaluate": ["adr-evaluate", str(run), "--points", "2", "--episodes", "1", "--workers", "1"],
        "adr-export": ["adr-export", str(run), "--format", "onnx", "--out", str(tmp_path / "export")],
        "adr-report": ["adr-report", str(run), "--out", str(tmp_path / "report"), "--workers", "1"],
        "adr-probe": ["adr-probe", "--policy", str(run), "--out", str(tmp_path / "probe"), "--iterations", "1"],
    }
    for name, argv in commands.items():
        done = run_tool(argv, env)
        assert done.returncode != 0, (name, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, (name, done.stderr)
        assert f"names env module(s) ['{MODULE}']" in done.stderr and f"--env-modules {MODULE}" in done.stderr, \
            (name, done.stderr)
        assert not marker.exists(), f"{name} imported the module a file named"
    # the deploy side reads checkpoints through the same loader
    with pytest.raises(CheckpointError, match="a file does not make this tool import code"):
        load_policy(run)
    assert not marker.exists()


def test_a_registered_env_imports_nothing_a_file_names(tmp_path, side_effect):
    marker, _ = side_effect
    run = write_run(tmp_path / "run", "adr/ErgoReacher-v0")
    from adr_deploy.policy_runner.loading import load_deployable

    assert load_policy(run).env_id == "adr/ErgoReacher-v0"
    assert load_deployable(run).task.env_id == "adr/ErgoReacher-v0"
    assert not marker.exists()


def test_a_module_the_user_names_is_imported(tmp_path, side_effect):
    marker, env = side_effect
    run = write_run(tmp_path / "run", "toy/Nowhere-v0")
    done = run_tool(["adr-evaluate", str(run), "--env-modules", MODULE, "--points", "2", "--workers", "1"], env)
    assert marker.exists()  # imported (the env id is still unknown: the module registers nothing)
    assert "unknown env id 'toy/Nowhere-v0'" in done.stderr and "Traceback" not in done.stderr
    marker.unlink()
    done = run_tool(["adr-evaluate", str(run), "--points", "2", "--workers", "1"], {**env, "ADR_ENV_MODULES": MODULE})
    assert marker.exists()


def test_a_malformed_module_list_in_a_checkpoint_is_one_line(tmp_path, side_effect):
    run = write_run(tmp_path / "run", "toy/Nowhere-v0")
    payload = torch.load(run / "checkpoints" / "latest.pt", weights_only=True)
    payload["config"]["env_modules"] = MODULE  # a string, not a list
    save_checkpoint(run / "checkpoints" / "latest.pt", payload)
    with pytest.raises(CheckpointError, match="config.env_modules must be a list of module names"):
        load_policy(run)
    assert sys.modules.get(MODULE) is None
