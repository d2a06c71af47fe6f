"""End to end: ``adr_launch adr deploy_real.launch.py`` with a freshly trained ErgoReacher policy.

The driver talks through real pypot to the XL-320 emulator on a pty (a thread of this test process); the policy
runner streams commands over Fast DDS. The emulator records every SYNC_READ it answers, so the test can check that
each episode's final distance comes from joint positions the motors really reported.
"""
from __future__ import annotations

import csv
import json
import math
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import rclpy
from geometry_msgs.msg import PointStamped
from poppy_standin.xl320 import A_GOAL_POSITION, A_PRESENT_POSITION, Xl320Emulator, degrees_to_units
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from adr_core.envs.ergo_jr import JOINT_NAMES, ErgoJrSim
from adr_core.envs.ergo_reacher import BASE_POSITION
from adr_core.training.config import TrainConfig
from adr_core.training.trainer import Trainer
from adr_deploy import real_report
from graph_harness.ros_processes import executable

pytestmark = pytest.mark.integration

DIRECTIONS = {1: 1, 2: -1, 3: -1, 4: 1, 5: -1, 6: -1}  # the Ergo Jr config: direct/indirect
START_DEG = {1: 10.0, 2: -20.0, 3: 30.0, 4: -40.0, 5: 15.0, 6: -5.0}  # motor frame: away from the start pose
REST_POSE_DEG = {1: 0.0, 2: -65.0, 3: 55.0, 4: 0.0, 5: -20.0, 6: 20.0}  # joint frame (config/ergo_jr.yaml)
FEEDBACK_ABORTS = ("no joint_states", "the arm went compliant")  # what a starved machine may cause
TINY_ERGO_RUN = {"env_id": "adr/ErgoReacher-v0", "total_agent_steps": 300, "agent.batch_size": 32,
                 "agent.learning_starts": 100, "agent.hidden_sizes": [32, 32], "svpg.num_particles": 2,
                 "discriminator.hidden_size": 32, "torch_threads": 1, "tensorboard": False, "progress": False}


class RecordingEmulator(Xl320Emulator):
    """The emulated bus, remembering the present and goal positions of every SYNC_READ it answered."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.reads: list[tuple[dict[int, int], dict[int, int]]] = []  # (present units, goal units) by motor id

    def _sync_read(self, params: bytes) -> bytes:
        self.reads.append(({i: m.read16(A_PRESENT_POSITION) for i, m in self.motors.items()},
                           {i: m.read16(A_GOAL_POSITION) for i, m in self.motors.items()}))
        return super()._sync_read(params)


class SummaryListener:
    """Collects the runner's ~/episode_summary messages (JSON) in a background spin."""

    def __init__(self, domain_id: int) -> None:
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = Node("deploy_real_listener", context=self.context)
        self.summaries: list[dict] = []
        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.node.create_subscription(String, "/policy_runner/episode_summary",
                                      lambda msg: self.summaries.append(json.loads(msg.data)), qos)
        self._executor = SingleThreadedExecutor(context=self.context)
        self._executor.add_node(self.node)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while not self._stop.is_set():
            self._executor.spin_once(timeout_sec=0.05)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short real training run on ErgoReacher (a few seconds): its checkpoints/latest.pt is what gets deployed."""
    out = tmp_path_factory.mktemp("ergo_reacher_run")
    Trainer(TrainConfig().with_overrides(TINY_ERGO_RUN), out).run()
    return out


@pytest.fixture
def listener(ros_env: dict[str, str]) -> Iterator[SummaryListener]:
    listener = SummaryListener(int(ros_env["ROS_DOMAIN_ID"]))
    yield listener
    listener.close()


def deploy(ros_env: dict[str, str], *arguments: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
    command = [str(executable("adr", "adr_launch")), "adr", "deploy_real.launch.py", *arguments,
               "--domain-id", ros_env["ROS_DOMAIN_ID"]]
    return subprocess.run(command, env=ros_env, capture_output=True, text=True, timeout=timeout)


def read_results(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def motor_units(joint_positions: dict[str, float]) -> dict[int, int]:
    """Joint-frame radians -> the motors' position units (offsets are 0 in the Ergo Jr config)."""
    return {i: degrees_to_units(DIRECTIONS[i] * math.degrees(joint_positions[f"m{i}"])) for i in DIRECTIONS}


def test_deploy_real_drives_the_emulated_arm_and_scores_measured_episodes(
        ros_env: dict[str, str], tmp_path: Path, trained_run: Path, listener: SummaryListener) -> None:
    with RecordingEmulator(positions_deg=START_DEG, link=tmp_path / "ttyPOPPY") as emulator:
        done = deploy(ros_env, f"checkpoint:={trained_run}", f"port:={emulator.port}", "episodes:=3", "seed:=3",
                      f"results_file:={tmp_path / 'results.jsonl'}")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output
    assert "[policy_runner]" in output and "arm stiff" in output and "moving to the rest pose" in output

    summaries = read_results(tmp_path / "results.jsonl")
    assert [s["episode"] for s in summaries] == [1, 2, 3]
    assert listener.summaries and all(s in summaries for s in listener.summaries)  # the same on ~/episode_summary
    # On a starved machine joint_states can stall (the emulator thread missing pypot's read timeout, or the
    # processes not scheduled): the episode under way must then be aborted (no distance, no success), never scored.
    for summary in summaries:
        if summary["aborted"] is not None:
            assert summary["aborted"].startswith(FEEDBACK_ABORTS), summary["aborted"]
            assert summary["final_distance"] is None and not summary["success"]
    complete = [s for s in summaries if s["aborted"] is None]
    assert complete, "\n".join(line for line in output.splitlines() if "episode" in line or "bus" in line)
    for summary in complete:
        assert summary["steps"] == 100 and summary["goal_source"] == "random"
        assert summary["env_id"] == "adr/ErgoReacher-v0" and summary["success_threshold"] == 0.025
        assert summary["success"] == (summary["final_distance"] < 0.025)
        assert summary["simulated_final_distance"] is not None
        assert 40.0 < summary["control_rate_hz"] < 65.0  # nominal 60 Hz (the simulator's 4 x 1/240 s)
        assert summary["start_error_rad"] <= 0.05
        # the final joint positions are what the motors reported in one SYNC_READ ...
        reported = motor_units(summary["final_joint_positions"])
        assert any(all(abs(present[i] - reported[i]) <= 1 for i in reported) for present, _ in emulator.reads), \
            f"episode {summary['episode']}: final joints {reported} were never read from the bus"
        # ... and the distance is the simulator's forward kinematics of them
        sim = ErgoJrSim(BASE_POSITION)
        sim.set_joint_angles(sim.joint_indices, [summary["final_joint_positions"][n] for n in JOINT_NAMES])
        tip = np.array(sim.end_effector_position())
        sim.close()
        assert summary["final_tip"] == pytest.approx(tip.tolist(), abs=1e-9)
        assert summary["final_distance"] == pytest.approx(float(np.linalg.norm(tip - summary["goal"])), abs=1e-9)

    # every step is in the steps file beside the results (default name), with the simulator's twin at each goal,
    # and adr-deploy-report compares them goal by goal
    with (tmp_path / "results_steps.csv").open(newline="") as handle:
        steps = list(csv.DictReader(handle))
    for summary in summaries:
        real = [r for r in steps if r["source"] == "real" and int(r["episode"]) == summary["episode"]]
        sim = [r for r in steps if r["source"] == "sim" and int(r["episode"]) == summary["episode"]]
        assert len(real) == summary["steps"] and len(sim) == 100
        assert float(sim[-1]["distance_m"]) == summary["simulated_final_distance"]
        if summary["aborted"] is None:
            assert float(real[-1]["distance_m"]) == summary["final_distance"]
    report = real_report.build(tmp_path / "results_steps.csv", tmp_path / "real_report")
    assert report["final_distances"].is_file() and "arm vs simulator" in report["html"].read_text().lower()

    # the arm moved: the policy's motors got many goals and went through many positions
    goals = {i: {goal[i] for _, goal in emulator.reads} for i in DIRECTIONS}
    positions = {i: {present[i] for present, _ in emulator.reads} for i in DIRECTIONS}
    assert all(len(goals[i]) > 20 and len(positions[i]) > 20 for i in (2, 3, 5, 6)), \
        {i: (len(goals[i]), len(positions[i])) for i in DIRECTIONS}
    # m1 and m4 never had a goal other than where they stood at start (compliant, then stiffened there) and 0 rad
    for i in (1, 4):
        assert goals[i] <= {degrees_to_units(START_DEG[i]), degrees_to_units(0.0)}, (i, goals[i])
    # and after the last episode the driver took the arm to its rest pose
    assert all(emulator.reads[-1][1][i] == _rest_units(i) for i in DIRECTIONS)


def test_deploy_real_dry_run_on_pypots_dummy(ros_env: dict[str, str], tmp_path: Path, trained_run: Path) -> None:
    results = tmp_path / "results.jsonl"
    done = deploy(ros_env, f"checkpoint:={trained_run / 'checkpoints'}", "dry_run:=true", "episodes:=2",
                  f"results_file:={results}")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output and "pypot dummy simulator" in output
    summaries = read_results(results)
    assert [s["episode"] for s in summaries] == [1, 2]
    assert all(s["aborted"] is None or s["aborted"].startswith(FEEDBACK_ABORTS) for s in summaries)
    complete = [s for s in summaries if s["aborted"] is None]
    assert complete, output
    for summary in complete:
        assert summary["steps"] == 100 and isinstance(summary["final_distance"], float)
        assert f"episode {summary['episode']}/2: final distance {summary['final_distance']:.4f} m" in output


def test_deploy_real_takes_goals_clicked_in_rviz(ros_env: dict[str, str], tmp_path: Path, trained_run: Path,
                                                listener: SummaryListener) -> None:
    clicks = listener.node.create_publisher(PointStamped, "/clicked_point", 10)
    results = tmp_path / "results.jsonl"
    command = [str(executable("adr", "adr_launch")), "adr", "deploy_real.launch.py", f"checkpoint:={trained_run}",
               "dry_run:=true", "goal_mode:=clicked", "episodes:=1", f"results_file:={results}",
               "--domain-id", ros_env["ROS_DOMAIN_ID"]]
    launcher = subprocess.Popen(command, env=ros_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 45.0
        while launcher.poll() is None and time.monotonic() < deadline:
            clicks.publish(_point("map", 0.0, -0.1, 0.2))  # a frame the runner does not know: refused
            clicks.publish(_point("base_link", 0.02, -0.12, 0.15))  # rviz with fixed frame base_link
            time.sleep(0.5)
        output, _ = launcher.communicate(timeout=30)
    finally:
        if launcher.poll() is None:
            launcher.kill()
    assert launcher.returncode == 0, output
    assert "ignored clicked point: goal in frame 'map'" in output and "Traceback" not in output
    (summary,) = read_results(results)
    # base_link -> world: + (0, 0, 0.07); x dropped (the arm's plane)
    assert summary["goal_source"] == "clicked" and summary["goal"] == pytest.approx([0.0, -0.12, 0.22])
    assert summary["off_plane_m"] == pytest.approx(0.02)
    assert summary["aborted"] is None or summary["aborted"].startswith(FEEDBACK_ABORTS)


def _point(frame: str, x: float, y: float, z: float) -> PointStamped:
    msg = PointStamped()
    msg.header.frame_id = frame
    msg.point.x, msg.point.y, msg.point.z = x, y, z
    return msg


def test_a_bad_checkpoint_is_refused_before_any_node_starts(ros_env: dict[str, str], tmp_path: Path) -> None:
    garbage = tmp_path / "latest.pt"
    garbage.write_bytes(b"\x80\x02 this is not a checkpoint")
    link = tmp_path / "ttyPOPPY"
    with Xl320Emulator(link=link) as emulator:  # a port that answers: nothing may reach it
        for checkpoint, reason in ((garbage, "is corrupt or not an adr_core checkpoint"),
                                   (tmp_path / "nonexistent", "no run directory or checkpoint at")):
            done = deploy(ros_env, f"checkpoint:={checkpoint}", f"port:={link}")
            assert done.returncode == 2, done.stdout + done.stderr
            assert done.stderr.strip().splitlines() == [done.stderr.strip()]  # one line
            assert done.stderr.startswith(f"adr_launch: deploy_real: checkpoint:={checkpoint}: ")
            assert reason in done.stderr
            assert "started" not in done.stdout and "Traceback" not in done.stdout + done.stderr
        assert sum(emulator.instructions.values()) == 0
    missing = deploy(ros_env)
    assert missing.returncode == 2 and "checkpoint:= is required" in missing.stderr


def _rest_units(motor_id: int) -> int:
    return degrees_to_units(DIRECTIONS[motor_id] * REST_POSE_DEG[motor_id])


def test_a_port_that_never_answers_is_reported_and_stops_the_graph_with_code_3(
        ros_env: dict[str, str], tmp_path: Path, trained_run: Path) -> None:
    done = deploy(ros_env, f"checkpoint:={trained_run}", f"port:={tmp_path / 'ttyNONE'}", "connect_timeout:=6",
                  timeout=90)
    output = done.stdout + done.stderr
    assert done.returncode == 3, output
    assert output.count("cannot open") >= 2 and "unreachable for 5 s" in output  # repeated while waiting
    assert "giving up: the bus at" in output and "connect_timeout 6 s" in output
    assert "Traceback" not in output
