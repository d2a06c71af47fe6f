"""adr-train command line: help covers every config key, runs, resumes, and fails clearly."""
from __future__ import annotations

import csv

import pytest
import yaml

from adr_core.training.cli import main, packaged_experiments
from adr_core.training.config import TrainConfig, field_docs


def test_help_documents_every_config_key_with_its_default(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for name, _, _, _ in field_docs():
        assert f"--{name}" in text
    assert "[1000]" in text and "[0.005]" in text and "--resume" in text and "lunar_lander_adr" in text


def test_every_packaged_experiment_is_a_valid_config():
    names = packaged_experiments()
    assert {"lunar_lander_adr", "lunar_lander_udr", "lunar_lander_baseline", "lunar_lander_oracle"} <= set(names)
    from adr_core.training.cli import resolve_experiment
    for name in names:
        TrainConfig.from_yaml(resolve_experiment(name))


def test_run_then_resume_from_the_command_line(tmp_path, capsys):
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump({
        "total_agent_steps": 100_000, "tensorboard": False, "progress": False, "svpg": {"num_particles": 2},
        "agent": {"hidden_sizes": [32, 32], "batch_size": 16, "learning_starts": 100, "buffer_capacity": 5000},
        "discriminator": {"steps_per_transition": 0.02}}))
    out = tmp_path / "run"
    assert main(["--config", str(config), "--out", str(out), "--max-iterations", "2", "--seed", "3"]) == 0
    assert TrainConfig.from_yaml(out / "config.yaml").seed == 3
    with pytest.raises(SystemExit) as exit_info:  # refuses to overwrite a run
        main(["--config", str(config), "--out", str(out)])
    assert exit_info.value.code == 2 and "--resume" in capsys.readouterr().err
    assert main(["--out", str(out), "--resume", "--max-iterations", "1", "--total_agent_steps", "200000"]) == 0
    with (out / "metrics.csv").open() as handle:
        assert [int(r["iteration"]) for r in csv.DictReader(handle)] == [0, 1, 2]


@pytest.mark.parametrize("argv, message", [
    (["--set", "agent.bach_size=3"], "unknown config key 'agent.bach_size'"),
    (["--agent.tau", "2"], "agent.tau must be in [0, 1]"),
    (["--config", "no_such_experiment"], "no packaged experiment"),
    (["--resume"], "config.yaml does not exist"),
])
def test_bad_arguments_exit_with_a_clear_message(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["--out", str(tmp_path / "x"), *argv])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
