"""End to end on a stand-in ErgoPusher rig: ``adr_launch adr deploy_real.launch.py`` with an ErgoPusher policy onto
the stand-in arm at the table (PyBullet physics, the puck, the camera tracker node on ``puck``), through the real
driver, pypot and the pty, every message signed with the deployment's key; and what is refused before anything
moves: a pusher policy on a rig without a puck tracker, a reacher policy on a pushing rig, puck readings signed with
another key."""
from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from poppy_standin.physics import PhysicsArm
from poppy_standin.puck import Tracker, load_puck
from poppy_standin.settings import load
from poppy_standin.tracker_node import TrackerThread
from test_deploy_real import TINY_ERGO_RUN, RecordingEmulator, deploy, read_results

from adr_core.training.config import TrainConfig
from adr_core.training.trainer import Trainer
from adr_deploy.policy_runner.goals import RandomGoals
from adr_deploy.policy_runner.loading import load_deployable
from adr_ros.signing import read_key
from graph_harness.signing import run_key

pytestmark = pytest.mark.integration
FEEDBACK_ABORTS = ("no joint_states", "the arm went compliant", "no puck position")  # a starved machine


@pytest.fixture(scope="module")
def pusher_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ergo_pusher_run")
    Trainer(TrainConfig().with_overrides({**TINY_ERGO_RUN, "env_id": "adr/ErgoPusher-v0"}), out).run()
    return out


@pytest.fixture(scope="module")
def reacher_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ergo_reacher_run")
    Trainer(TrainConfig().with_overrides(TINY_ERGO_RUN), out).run()
    return out


@contextlib.contextmanager
def rig(link: Path, domain_id: int, task: str, key: bytes | None = None) -> Iterator[tuple[RecordingEmulator,
                                                                                          PhysicsArm]]:
    """The stand-in arm on ``link``: at the table with puck and tracker (pusher) or alone (reacher); ``key``: the
    deployment's (the tracker then also signs its readings, as adr-standin-arm does by default)."""
    standin = load("reference")
    puck, tracker = load_puck(standin.source, "reference") if task == "pusher" else (None, None)
    arm = PhysicsArm(standin, puck=puck)
    tracking = (TrackerThread(arm.puck, Tracker(tracker), domain_id, key=key)
                if arm.puck is not None and tracker else None)
    try:
        with RecordingEmulator(link=link, motion=arm) as emulator:
            yield emulator, arm
    finally:
        if tracking is not None:
            tracking.stop()
        arm.close()


def test_deploy_real_pushes_the_stand_ins_puck_from_the_envs_starts(ros_env, tmp_path: Path,
                                                                    pusher_run: Path) -> None:
    key_file = run_key(tmp_path)  # the deployment's key: the driver, the runner and the tracker sign with it
    with rig(tmp_path / "ttyPOPPY", int(ros_env["ROS_DOMAIN_ID"]), "pusher", read_key(key_file)) as (emulator, arm):
        done = deploy(ros_env, f"checkpoint:={pusher_run}", f"port:={emulator.port}", "episodes:=2", "seed:=5",
                      f"results_file:={tmp_path / 'results.jsonl'}", f"key_file:={key_file}", timeout=120.0)
        placed = arm.puck.placed
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output
    summaries = read_results(tmp_path / "results.jsonl")
    assert [s["episode"] for s in summaries] == [1, 2]
    deployable = load_deployable(pusher_run)
    goals = RandomGoals(deployable.task, deployable.policy, deployable.space, seed=5, episode_steps=100)
    expected_starts = [goals.next_goal(k).puck_start for k in range(2)]
    assert [tuple(s["puck_start"]) for s in summaries] == pytest.approx(expected_starts)
    assert placed >= 2  # the tracker node put the puck at each start (the operator's job on the real rig)
    complete = [s for s in summaries if s["aborted"] is None]
    for summary in summaries:
        if summary["aborted"] is not None:
            assert summary["aborted"].startswith(FEEDBACK_ABORTS), summary["aborted"]
    assert complete, output
    for summary in complete:
        assert summary["env_id"] == "adr/ErgoPusher-v0" and summary["steps"] == 100
        puck, goal = summary["final_puck"], summary["goal"]
        assert summary["final_distance"] == pytest.approx(math.dist(puck, goal[:2]), abs=1e-9)
        assert summary["success"] == (summary["final_distance"] < 0.025)


def _goals_unchanged(emulator: RecordingEmulator) -> bool:
    goals = [goal for _, goal in emulator.reads]
    return all(g == goals[0] for g in goals)


def test_a_pusher_policy_on_a_rig_without_a_puck_tracker_is_refused_before_anything_moves(
        ros_env, tmp_path: Path, pusher_run: Path) -> None:
    with rig(tmp_path / "ttyPOPPY", int(ros_env["ROS_DOMAIN_ID"]), "reacher") as (emulator, _):
        done = deploy(ros_env, f"checkpoint:={pusher_run}", f"port:={emulator.port}", "episodes:=1", timeout=90.0)
    output = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in output
    assert "no puck position on 'signed/puck' within 5 s" in output and "nothing was sent to the arm" in output
    assert emulator.reads and _goals_unchanged(emulator)


def test_puck_readings_signed_with_another_key_are_dropped_and_nothing_moves(ros_env, tmp_path: Path,
                                                                             pusher_run: Path) -> None:
    """A tracker (or anyone) without the deployment's key cannot feed the policy puck positions (issue 47)."""
    other = read_key(run_key(tmp_path / "other"))
    with rig(tmp_path / "ttyPOPPY", int(ros_env["ROS_DOMAIN_ID"]), "pusher", other) as (emulator, _):
        done = deploy(ros_env, f"checkpoint:={pusher_run}", f"port:={emulator.port}", "episodes:=1",
                      f"key_file:={run_key(tmp_path)}", timeout=90.0)
    output = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in output
    assert "dropped a message on puck: bad_signature" in output, output
    assert "no puck position on 'signed/puck' within 5 s" in output and "nothing was sent to the arm" in output
    assert emulator.reads and _goals_unchanged(emulator)


def test_a_reacher_policy_on_a_pushing_rig_is_refused_before_anything_moves(ros_env, tmp_path: Path,
                                                                           reacher_run: Path) -> None:
    key_file = run_key(tmp_path)
    with rig(tmp_path / "ttyPOPPY", int(ros_env["ROS_DOMAIN_ID"]), "pusher", read_key(key_file)) as (emulator, _):
        done = deploy(ros_env, f"checkpoint:={reacher_run}", f"port:={emulator.port}", "episodes:=1",
                      f"key_file:={key_file}", timeout=90.0)
    output = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in output
    assert "this rig is set up for pushing" in output and "nothing was sent to the arm" in output
    assert emulator.reads and _goals_unchanged(emulator)
