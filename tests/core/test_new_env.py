"""Adding an env takes one module (its env and its record) and its YAML files: the toy env of tests/toy_env, which
adr_core does not know, goes through training, evaluation and the report with nothing else changed (issue 31)."""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

TOY_DIR = Path(__file__).resolve().parents[1] / "toy_env"
TOY_CONFIG = {"env_id": "toy/PointMass-v0", "env_modules": ["adr_toy_env"], "sampler": "adr", "seed": 3,
              "total_agent_steps": 600, "progress": False, "tensorboard": False, "checkpoint_every": 100,
              "agent": {"hidden_sizes": [16, 16], "batch_size": 16, "learning_starts": 100},
              "discriminator": {"hidden_size": 16, "steps_per_transition": 0.1}}


def toy_env_vars() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(TOY_DIR), os.environ.get("PYTHONPATH", "")])}


def run_cli(script: str, *argv: str) -> subprocess.CompletedProcess[str]:
    path = shutil.which(script)
    assert path is not None, f"{script} is not on PATH (source scripts/env.sh)"
    result = subprocess.run([path, *argv], env=toy_env_vars(),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def test_an_env_registered_by_its_own_module_trains_evaluates_and_reports(tmp_path: Path) -> None:
    config = tmp_path / "toy.yaml"
    config.write_text(yaml.safe_dump(TOY_CONFIG))
    run = tmp_path / "run"
    run_cli("adr-train", "--config", str(config), "--out", str(run))
    rows = list(csv.DictReader((run / "metrics.csv").open()))
    assert int(rows[-1]["agent_steps"]) == 600
    assert len(rows[0]) and float(rows[0]["episodes"]) == 2  # the record's particle count (svpg.num_particles null)
    samples = list(csv.DictReader((run / "sampled_parameters.csv").open()))
    assert {"mass", "u_mass"} <= set(samples[0])

    # the tools read the run's files; they import the module its config names because the user names it too
    run_cli("adr-evaluate", str(run), "--env-modules", "adr_toy_env", "--points", "3", "--episodes", "1", "--seeds",
            "0", "--workers", "1")
    points = list(csv.DictReader((run / "evaluation" / "sweep_points.csv").open()))
    assert len(points) == 3 and {float(p["mass"]) for p in points} == {0.5, 1.75, 3.0}  # train + test hull
    assert all(float(p["solved_threshold"]) == 0.1 for p in points)  # the record's solved criterion

    report = tmp_path / "report"
    run_cli("adr-report", str(run), "--env-modules", "adr_toy_env", "--out", str(report), "--points", "3",
            "--episodes", "1",
            "--seeds", "0", "--workers", "1", "--no-checkpoint-curves", "--formats", "png")
    summary = (report / "summary.md").read_text()
    assert "toy/PointMass-v0" in summary and "final distance" in summary


def test_an_unregistered_env_is_refused_in_one_line_that_says_how_to_add_it() -> None:
    from adr_core.training.config import ConfigError, TrainConfig

    with pytest.raises(ConfigError, match=r"^env_id: unknown env id 'toy/PointMass-v0'; known: .*env_modules"):
        TrainConfig(env_id="toy/PointMass-v0")
    with pytest.raises(ConfigError, match=r"^env_modules: cannot import 'no_such_env_module'"):
        TrainConfig(env_modules=("no_such_env_module",))
