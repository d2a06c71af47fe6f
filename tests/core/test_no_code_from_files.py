"""A file never makes a tool import code (issue 47): env modules named in a checkpoint or a run's config.yaml are
imported only when the env is registered already (then nothing is imported) or the user named them (--env-modules,
$ADR_ENV_MODULES). Checked with a module whose import leaves a mark on disk, through every tool that reads such
files: adr-evaluate, adr-export, adr-report, adr-probe and the deploy runner's loader."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

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


@pytest.mark.parametrize("env_id", ["toy/Nowhere-v0", "adr/LunarLander-v0"])
def test_resume_imports_no_module_the_runs_files_name(tmp_path, side_effect, env_id):
    """Issue 61: ``adr-train --resume`` read the run's config.yaml and imported its env_modules; the graph's trainer
    and discriminator imported a checkpoint's while comparing configs. A module a run's files name is imported only
    when the user names it (--env-modules, $ADR_ENV_MODULES), also when the env is registered (the module would
    otherwise run in the evaluation workers)."""
    from adr_core.run_dir import check_config
    from adr_core.training.config import ConfigError, TrainConfig

    marker, env = side_effect
    run = write_run(tmp_path / "run", env_id)
    done = run_tool(["adr-train", "--out", str(run), "--resume", "--progress", "false"], env)
    assert done.returncode == 2 and not marker.exists(), (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines() == [
        f"adr-train: error: {run / 'config.yaml'} names env module(s) ['{MODULE}'] to import; a file does not make "
        f"this tool import code: if you trust it, name them yourself with --env-modules {MODULE} "
        f"(or ADR_ENV_MODULES={MODULE})"], done.stderr
    saved = TrainConfig().to_dict() | {"env_id": env_id, "env_modules": [MODULE]}
    with pytest.raises(ConfigError, match="a file does not make this tool import code"):
        check_config(saved, TrainConfig(), run / "checkpoints" / "agent-000001.pt")  # the trainer node's resume
    from adr_core.base.checkpoint import CheckpointError
    from adr_discriminator_node.checkpoint_payload import restore

    payload = {"iteration": 1, "state": {}, "env_id": "adr/LunarLander-v0", "obs_dim": 8, "act_dim": 2, "config": saved}
    with pytest.raises(CheckpointError, match="a file does not make this tool import code"):
        restore(SimpleNamespace(obs_dim=8, act_dim=2), payload, TrainConfig(), "discriminator-000001.pt")
    assert not marker.exists()
    # named by the user: imported
    done = run_tool(["adr-train", "--out", str(run), "--resume", "--env-modules", MODULE, "--progress", "false"],
                    env)
    assert marker.exists(), (done.stdout, done.stderr)


def test_a_graph_resume_imports_no_module_the_runs_config_names(tmp_path, side_effect):
    """resume:=true is checked by the launchers before any node starts: the run's config.yaml is read as a file's."""
    from adr.graph import GRAPHS

    marker, _ = side_effect
    run = write_run(tmp_path / "run", "adr/LunarLander-v0")
    (run / "checkpoints" / "latest.json").write_text('{"iteration": 1, "files": {"agent": "agent-000001.pt"}}')
    with pytest.raises(ValueError, match=r"^train_sim: resume:=true run_dir:=.*names env module\(s\) "
                                         r"\['adr_side_effect_probe'\]"):
        GRAPHS["train_sim"].nodes({"resume": "true", "run_dir": str(run)})
    assert not marker.exists()
    with pytest.raises(ValueError, match=r"resume:=true run_dir:=.*nothing to resume"):
        GRAPHS["train_sim"].nodes({"resume": "true", "run_dir": str(tmp_path / "no_run")})
    assert not (tmp_path / "no_run").exists()
