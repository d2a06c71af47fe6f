"""The decision rule of experiments/time_to_land.py on made-up runs: medians, censoring, the ratio and its bound."""
from __future__ import annotations

from pathlib import Path

import pytest

from experiments import time_to_land


@pytest.fixture(scope="module")
def ttl():
    return time_to_land


def run(name: str, seed: int, landed_at: float | None, train_s: float, solved: float) -> dict:
    landed = {"train_s": landed_at, "agent_steps": 1000} if landed_at is not None else None
    return {"name": name, "seed": seed, "landed": landed, "train_s": train_s, "evaluation_s": 1.0,
            "final_solved": solved, "final_return_mean": 250.0 if solved > 0.9 else 100.0, "stopped": "budget"}


def ours(times):
    return [run("ours", s, t, t or 700.0, 0.95 if t else 0.0) for s, t in enumerate(times)]


def test_a_landing_sb3_median_gives_a_plain_ratio(ttl):
    sb3 = [run("sb3_sac", s, t, 720.0, 0.5) for s, t in enumerate([600.0, 660.0, None])]
    verdict = ttl.summarize(ours([100.0, 200.0, None]) + sb3)["verdicts"]["ours"]
    assert verdict["against"] == "sb3_sac" and not verdict["ratio_is_lower_bound"]
    assert verdict["ratio"] == pytest.approx(660.0 / 200.0)


def test_a_censored_median_is_bounded_by_the_median_of_the_censoring_times_and_ties_go_to_the_smaller_bound(ttl):
    # both SB3 medians never land; SAC's bound median(720, 626, 720) = 720 < TD3's median(727, 724, 725) = 725
    sac = [run("sb3_sac", s, t, 720.0, ok) for s, (t, ok) in enumerate([(None, 0.5), (626.0, 0.7), (None, 0.0)])]
    td3 = [run("sb3_td3", s, None, t, 0.1) for s, t in enumerate([727.0, 724.0, 725.0])]
    summary = ttl.summarize(ours([136.0, 212.0, None]) + td3 + sac)
    assert summary["table"]["sb3_sac"]["median_lower_bound_s"] == 720.0
    assert summary["table"]["sb3_td3"]["median_lower_bound_s"] == 725.0
    verdict = summary["verdicts"]["ours"]
    assert verdict["against"] == "sb3_sac" and verdict["ratio_is_lower_bound"]
    assert verdict["ratio"] == pytest.approx(720.0 / 212.0)
    assert verdict["goal_met"]


def test_worse_final_success_fails_the_goal_whatever_the_ratio(ttl):
    sb3 = [run("sb3_td3", s, None, 720.0, 0.99) for s in range(3)]
    verdict = ttl.summarize(ours([100.0, 100.0, 100.0]) + sb3)["verdicts"]["ours"]
    assert verdict["ratio"] >= 3.0 and not verdict["final_success_equal_or_better"] and not verdict["goal_met"]


@pytest.mark.parametrize("driver, argv", [
    ("time_to_land", ["--runs", "ours", "--seeds", "0"]),
    ("parity", []),
    ("probe_focus", []),
])
def test_a_driver_makes_its_out_folder_before_its_runs_write_into_it(driver, argv, tmp_path, monkeypatch):
    """The address check of issue 61 had moved --out's mkdir after the runs, whose logs go into it: every run of a
    fresh --out failed with 'No such file or directory'."""
    import importlib

    from experiments import runner

    module = importlib.import_module(f"experiments.{driver}")
    out = tmp_path / "new" / "nested"
    seen = []

    def fake_run(jobs, worker, **_):  # noqa: ANN001, ANN202 - stands in for the pool: records what the runs would find
        seen.append(out.is_dir())
        raise SystemExit(0)

    monkeypatch.setattr(runner, "run", fake_run)
    with pytest.raises(SystemExit):
        module.main([*argv, "--out", str(out)])
    assert seen == [True]


def test_the_stop_reason_reads_the_met_column_wherever_it_sits(ttl, tmp_path):
    """early_stop.csv gained range columns after ``met``: a met check must still read as an early stop."""
    header = "agent_steps,wall_time_s,met,range_solved_fraction,hard_solved_fraction\n"
    (tmp_path / "early_stop.csv").write_text(header + "1000,1.0,0,nan,0.5\n2000,2.0,1,nan,0.9\n")
    assert ttl.stop_reason(tmp_path) == "early stop"
    (tmp_path / "early_stop.csv").write_text(header + "1000,1.0,0,nan,0.5\n2000,2.0,0,nan,1\n")
    assert ttl.stop_reason(tmp_path) == "budget"
    (tmp_path / "early_stop.csv").unlink()
    assert ttl.stop_reason(tmp_path) == "budget"


def test_final_episodes_run_in_the_runs_own_space_and_length(tmp_path):
    """A run trained on a space of its own (an identified arm) with its own episode length plays its final
    episodes there, not on the env's packaged arm (which scored the reacher's identified-arm runs on soft servos)."""
    import yaml
    from tiny_configs import tiny_config

    from adr_core.evaluation.policies import load_policy
    from adr_core.training.trainer import Trainer

    packaged = time_to_land.final_env(_policy_of(tmp_path / "plain", {}, Trainer, tiny_config, load_policy))
    assert packaged.unwrapped.randomization_space.reference()[0] == 13.0 and packaged.spec.max_episode_steps == 1000
    space = yaml.safe_load((Path(__file__).parents[2] / "src/adr_core/adr_core/config/spaces/LunarLander-v0.yaml")
                           .read_text())
    space["dimensions"][0].update(default=6.0, train={"absolute": [5.0, 7.0]})
    (tmp_path / "weak.yaml").write_text(yaml.safe_dump(space))
    own = time_to_land.final_env(_policy_of(tmp_path / "weak", {"space": str(tmp_path / "weak.yaml"),
                                                                "max_episode_steps": 60},
                                            Trainer, tiny_config, load_policy))
    assert own.unwrapped.randomization_space.reference()[0] == 6.0 and own.spec.max_episode_steps == 60


def _policy_of(run_dir, overrides, Trainer, tiny_config, load_policy):
    Trainer(tiny_config(total_agent_steps=300, **overrides), run_dir).run(max_iterations=1)
    return load_policy(run_dir)
