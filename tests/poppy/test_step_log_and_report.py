"""Per-step logs of the episodes on the arm (with the simulator's twin at the same goal) and adr-deploy-report.

The arm is ``ServoArm`` in simulated time (see test_policy_runner_episodes.py); the end-to-end run over the emulated
XL-320 bus is in tests/integration/test_deploy_real.py."""
from __future__ import annotations

import csv
import dataclasses
import math

import numpy as np
import pytest
from test_policy_runner_episodes import FixedGoal, ServoArm, deployable, goal_at, runner_for  # noqa: F401

from adr_core.envs.ergo_jr import SOLVED_DISTANCE
from adr_deploy import real_report
from adr_deploy.policy_runner.errors import DeployError
from adr_deploy.policy_runner.goals import RandomGoals
from adr_deploy.policy_runner.results_file import ResultsFile, steps_file_beside
from adr_deploy.policy_runner.step_log import StepLog

EPISODES = 2


class Recording:
    """The policy, keeping what it saw and what it answered."""

    def __init__(self, policy) -> None:
        self.policy, self.seen, self.answers = policy, [], []

    def __call__(self, obs):
        action = self.policy(obs)
        self.seen.append(np.array(obs, dtype=np.float64))
        self.answers.append(np.clip(np.array(action, dtype=np.float64), -1, 1))
        return action


@pytest.fixture(scope="module")
def session(deployable, tmp_path_factory):  # noqa: F811 - the fixture imported above
    """Two random-goal episodes on the servo arm, logged step by step."""
    folder = tmp_path_factory.mktemp("deploy")
    recording = Recording(deployable.policy)
    policy = dataclasses.replace(deployable, policy=recording)
    task = deployable.task
    log = StepLog(steps_file_beside(folder / "results.jsonl"), task.obs_dim, task.act_dim, task.joint_names)
    runner, _ = runner_for(policy, ServoArm(speed=3.0))
    runner.step_log = log
    goals = RandomGoals(task, deployable.policy, deployable.space, seed=7, episode_steps=deployable.episode_steps)
    results = ResultsFile(folder / "results.jsonl")
    summaries = runner.run_episodes(goals, EPISODES, on_summary=results.append)
    goals.close()
    with log.path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return {"folder": folder, "log": log, "rows": rows, "summaries": summaries, "recording": recording,
            "runner": runner, "deployable": deployable}


def _columns(row, prefix):
    keys = sorted((k for k in row if k.startswith(prefix)), key=lambda k: int(k.split("_")[-1]))
    return np.array([float(row[k]) for k in keys])


def test_every_step_on_the_arm_is_logged_as_the_policy_saw_and_answered_it(session):
    rows, summaries, recording = session["rows"], session["summaries"], session["recording"]
    real = [r for r in rows if r["source"] == "real"]
    assert len(real) == sum(s.steps for s in summaries) == EPISODES * 100
    np.testing.assert_array_equal(np.array([_columns(r, "obs_") for r in real]), np.array(recording.seen))
    np.testing.assert_array_equal(np.array([_columns(r, "action_") for r in real]), np.array(recording.answers))
    runner = session["runner"]
    for summary in summaries:
        episode = [r for r in real if int(r["episode"]) == summary.episode]
        assert [int(r["step"]) for r in episode] == list(range(100))
        assert np.allclose(np.diff([float(r["t_s"]) for r in episode]), 1 / 60)
        assert float(episode[-1]["distance_m"]) == summary.final_distance  # the last step: the final feedback
        goal = np.array([float(episode[0][f"goal_{a}"]) for a in "xyz"])
        assert tuple(goal) == summary.goal
        for before, after in zip(episode[:-1], episode[1:]):  # distance after step k = distance at obs k+1
            joints = {name[len("joint_"):]: float(v) for name, v in after.items() if name.startswith("joint_")}
            tip = runner.kinematics.tip(joints)
            assert float(before["distance_m"]) == pytest.approx(float(np.linalg.norm(tip - goal)), abs=1e-12)


def test_the_simulators_twin_is_the_reference_episode_at_the_same_goal(session):
    rows, summaries, deployable = session["rows"], session["summaries"], session["deployable"]
    for summary in summaries:
        sim = [r for r in rows if r["source"] == "sim" and int(r["episode"]) == summary.episode]
        assert len(sim) == deployable.episode_steps
        assert float(sim[-1]["distance_m"]) == summary.simulated_final_distance
        obs = np.array([_columns(r, "obs_") for r in sim], dtype=np.float32)
        actions = np.array([_columns(r, "action_") for r in sim])
        np.testing.assert_allclose(np.clip(deployable.policy(obs), -1, 1), actions, atol=1e-6)  # deterministic
        assert obs[0, 8:] == pytest.approx(np.array(summary.goal)[[1, 2]], abs=1e-6)  # same goal in the obs
        assert all(r["feedback_age_s"] == "" and r["joint_m1"] == "" for r in sim)


def test_a_steps_file_for_another_policy_is_refused_and_left_as_it_is(session, tmp_path):
    path = session["log"].path
    before = path.read_bytes()
    with pytest.raises(DeployError, match="other columns"):
        StepLog(path, 16, 4, session["deployable"].task.joint_names)
    assert path.read_bytes() == before
    (tmp_path / "a_file").write_text("")
    with pytest.raises(DeployError, match="cannot write the steps file"):
        StepLog(tmp_path / "a_file" / "steps.csv", 10, 4, session["deployable"].task.joint_names)


def test_a_failing_steps_file_does_not_stop_the_episodes(deployable, tmp_path):  # noqa: F811
    task = deployable.task
    log = StepLog(tmp_path / "steps.csv", task.obs_dim, task.act_dim, task.joint_names)
    messages: list[str] = []
    runner, _ = runner_for(deployable, ServoArm())
    runner.step_log, runner._log = log, messages.append
    log.path.unlink()
    log.path.mkdir()  # appending now fails with IsADirectoryError
    summaries = runner.run_episodes(FixedGoal(goal_at(runner, {"m2": 0.2})), 2)
    assert len(summaries) == 2 and all(s.aborted is None for s in summaries)
    assert sum("steps not written" in m for m in messages) == 2


def test_the_report_compares_arm_and_simulator_goal_by_goal(session, tmp_path):
    files = real_report.build(session["log"].path, tmp_path / "report")
    for key in ("markdown", "html", "csv", "distance_curves", "final_distances", "action_gap"):
        assert files[key].is_file() and files[key].stat().st_size > 0
    assert files["distance_curves"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with files["csv"].open(newline="") as handle:
        table = list(csv.DictReader(handle))
    summaries = session["summaries"]
    assert [int(r["episode"]) for r in table] == [s.episode for s in summaries]
    for row, summary in zip(table, summaries):
        assert float(row["real_final_distance_m"]) == summary.final_distance
        assert float(row["sim_final_distance_m"]) == pytest.approx(summary.simulated_final_distance, abs=1e-12)
        assert (row["real_success"] == "True") == summary.success
    pairs = real_report.load_steps(session["log"].path)
    total = real_report.totals(real_report.episode_rows(pairs, SOLVED_DISTANCE))
    assert total["paired"] == total["complete"] == EPISODES
    assert total["real_success"] == np.mean([s.success for s in summaries])
    assert total["real_mean_m"] == pytest.approx(np.mean([s.final_distance for s in summaries]), abs=1e-12)
    text = files["markdown"].read_text()
    assert "Arm vs simulator, same goals" in text and "final_distances.png" in text


def test_the_report_refuses_a_file_that_is_not_a_step_log(tmp_path, capsys):
    bad = tmp_path / "other.csv"
    bad.write_text("a,b\n1,2\n")
    assert real_report.main([str(bad), "--out", str(tmp_path / "out")]) == 2
    assert "is not a policy runner step log" in capsys.readouterr().err
    assert real_report.SOLVED_DISTANCE == SOLVED_DISTANCE
    assert not math.isnan(SOLVED_DISTANCE)
