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


def test_the_fast_preset_is_sac_and_the_paper_configs_stay_the_paper_agent():
    from adr_core.training.cli import resolve_experiment

    fast = TrainConfig.from_yaml(resolve_experiment("lunar_lander_adr_fast"))
    assert (fast.sampler, fast.env_id, fast.num_particles) == ("adr", "adr/LunarLander-v0", 10)  # the paper's ADR
    agent = fast.agent
    assert (agent.algorithm, agent.hidden_sizes, agent.n_step, agent.lr_schedule) == ("sac", (64, 64), 3, "linear")
    assert (agent.updates_per_step, agent.batch_size, fast.total_agent_steps) == (0.5, 256, 340_000)
    assert not fast.learn_from_reference  # round 12 (results/lander_preset_search/round12/table.md)
    assert (fast.early_stop_hard_episodes, fast.early_stop_hard_solved_fraction) == (40, 0.9)  # stops on the hard end
    assert "FAST agent preset (not the paper's agent)" in resolve_experiment("lunar_lander_adr_fast").read_text()
    for paper in ("lunar_lander_adr", "lunar_lander_udr", "lunar_lander_adr_published_code"):
        config = TrainConfig.from_yaml(resolve_experiment(paper))
        assert (config.agent.algorithm, config.agent.hidden_sizes, config.agent.n_step) == ("ddpg", (400, 300), 1)
        assert not config.learn_from_reference  # the paper stores the randomized trajectories only


@pytest.mark.parametrize("argv, message", [
    (["--set", "agent.bach_size=3"], "unknown config key 'agent.bach_size'"),
    (["--agent.tau", "2"], "agent.tau must be in [0, 1]"),
    (["--set", "agent.algorithm=ppo"], "agent.algorithm must be one of ['ddpg', 'td3', 'sac', 'crossq'], got 'ppo'"),
    (["--set", "agent.n_step=0"], "agent.n_step must be >= 1"),
    (["--set", "agent.batch_size=5000", "--set", "agent.buffer_capacity=1000"],
     "agent.batch_size 5000 exceeds agent.buffer_capacity 1000"),
    (["--set", "agent.updates_per_step=-1"], "agent.updates_per_step must be >= 0, got -1"),
    (["--set", "rollout_max_steps=0"], "rollout_max_steps must be >= 1 or null"),
    (["--set", "evaluate_every_steps=-5"], "evaluate_every_steps must be >= 0"),
    (["--config", "no_such_experiment"], "no packaged experiment"),
    (["--resume"], "config.yaml does not exist"),
    (["--set", "agent.batch_size=[1,"], "--set agent.batch_size='[1,' is not a valid YAML value"),
    (["--agent.tau", "{a"], "--agent.tau='{a' is not a valid YAML value"),
    (["--env_id", "adr/Nope-v0"], "env_id: unknown env id 'adr/Nope-v0'; known: "),
    (["--config", "ergo_reacher_adr", "--env_id", "adr/LunarLander-v0"],
     "env_id adr/LunarLander-v0 contradicts --config ergo_reacher_adr, a config of adr/ErgoReacher-v0"),
    (["--config", "pusher3dof_udr", "--set", "env_id=adr/ErgoPusher-v0"], "contradicts --config pusher3dof_udr"),
    (["--set", "learn_from_reference=maybe"], "learn_from_reference must be true or false"),
])
def test_bad_arguments_exit_with_a_clear_message(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["--out", str(tmp_path / "x"), *argv])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_out_naming_a_file_is_refused(tmp_path, capsys):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("kept")
    with pytest.raises(SystemExit) as exit_info:
        main(["--out", str(a_file), "--total_agent_steps", "10"])
    assert exit_info.value.code == 2
    assert f"argument --out: {a_file} is a file, not a directory" in capsys.readouterr().err
    assert a_file.read_text() == "kept"
