"""The stand-in's ErgoPusher rig: the puck settings act as named (slippery slides further than rough), the puck and
the arm are where the env puts them (the tracker's frame is the env's), the tracker's latency and noise, and bad puck
settings refused with one line before anything starts."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from poppy_standin.physics import PhysicsArm
from poppy_standin.puck import Tracker, TrackerModel, load_puck
from poppy_standin.settings import StandInError, load

from adr_core.envs import ergo_pusher, make_env

STEP = 1.0 / 240.0


def rig(puck: str = "reference", **overrides) -> PhysicsArm:
    standin = load("reference")
    setting, _ = load_puck(standin.source, puck, overrides)
    return PhysicsArm(standin, puck=setting)


def slide(arm: PhysicsArm, velocity: tuple[float, float], seconds: float = 0.5) -> float:
    """Where a puck kicked at ``velocity`` from (0, -0.1) comes to rest (the arm is compliant, far above it)."""
    assert arm.puck is not None
    ergo_pusher.place_puck(arm.sim.client, arm.puck.puck, (0.0, -0.1), velocity)
    for _ in range(round(seconds / STEP)):
        arm.step({})
    (x, y), _ = arm.puck.state()
    return math.hypot(x, y + 0.1)


def test_a_slippery_puck_slides_further_than_a_rough_one_under_the_same_kick() -> None:
    distances = {name: slide(rig(name), (0.3, 0.0)) for name in ("slippery", "reference", "rough")}
    assert distances["slippery"] > distances["reference"] > distances["rough"] > 0.0
    assert distances["slippery"] > 2 * distances["rough"]


def test_the_reference_puck_slides_as_the_envs() -> None:
    env = make_env("adr/ErgoPusher-v0")
    env.reset(seed=0)
    unwrapped = env.unwrapped
    unwrapped.sim.set_joint_angles(unwrapped.sim.joint_indices, np.zeros(6))
    ergo_pusher.place_puck(unwrapped.sim.client, unwrapped._puck, (0.0, -0.1), (0.3, 0.0))
    unwrapped.sim.step(120)
    env_slide = math.dist(unwrapped.puck_position.tolist(), (0.0, -0.1))
    env.close()
    assert slide(rig("reference"), (0.3, 0.0)) == pytest.approx(env_slide, rel=0.05)


def test_the_puck_and_the_arm_are_in_the_envs_frame() -> None:
    arm = rig()
    env = make_env("adr/ErgoPusher-v0")
    env.reset(seed=3)
    unwrapped = env.unwrapped
    start = tuple(float(v) for v in unwrapped.puck_position)
    arm.puck.request_start(*start)
    arm.step({})
    arm.puck.record(100.0)
    assert arm.puck.history()[-1] == pytest.approx((100.0, *start), abs=1e-9)
    # the same joint angles put the tip at the same world point in both (same URDF, same base position)
    pose = [0.3, -1.1, -0.4, 0.0, 0.5, 0.0]
    arm.sim.set_joint_angles(arm.sim.joint_indices, pose)
    unwrapped.sim.set_joint_angles(unwrapped.sim.joint_indices, pose)
    assert arm.sim.end_effector_position() == pytest.approx(unwrapped.sim.end_effector_position(), abs=1e-9)
    env.close()


def test_the_tracker_reports_the_state_latency_ago_with_noise_and_its_capture_stamp() -> None:
    history = [(10.0 + 0.01 * k, 0.001 * k, -0.1) for k in range(100)]  # moving +x at 0.1 m/s
    exact = Tracker(TrackerModel(rate_hz=30.0, latency_s=0.05, noise_m=0.0))
    stamp, x, y = exact.reading(history, now=10.5)
    assert stamp == pytest.approx(10.45) and x == pytest.approx(0.045) and y == -0.1
    assert exact.reading(history, now=10.04) is None  # nothing captured 50 ms before yet
    noisy = Tracker(TrackerModel(rate_hz=30.0, latency_s=0.05, noise_m=0.002), seed=1)
    errors = np.array([noisy.reading(history, now=10.5)[1] - 0.045 for _ in range(2000)])
    assert abs(errors.mean()) < 2e-4 and errors.std() == pytest.approx(0.002, rel=0.1)


@pytest.mark.parametrize("argv, message", [
    (["--task", "pusher", "--puck", "icy"], "puck setting 'icy' is not in the stand-in file"),
    (["--task", "pusher", "--puck-set", "frictionloss=5"], "frictionloss=5 is outside [0, 0.5] N"),
    (["--task", "pusher", "--puck-set", "damping=-1"], "damping=-1 is outside [0, 2]"),
    (["--task", "pusher", "--puck-set", "latency_s=nan"], "latency_s=nan is not a number"),
    (["--task", "pusher", "--puck-set", "mass=1"], "expected key=value with key one of"),
    (["--puck", "slippery"], "--puck, --puck-set and --key-file need --task pusher"),
    (["--task", "pusher", "--motion", "constant"], "--task pusher needs --motion physics"),
])
def test_bad_puck_settings_are_one_line_and_start_nothing(tmp_path, argv, message) -> None:
    link = tmp_path / "tty"
    done = subprocess.run([sys.executable, "-m", "poppy_standin.cli", "--link", str(link), *argv],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip() and "pybullet build time" not in line]
    assert len(lines) == 1 and message in lines[0] and not link.exists()


def test_puck_settings_are_checked_in_the_file_too() -> None:
    source = {**load("reference").source, "puck": {"frictionloss": 0.01, "damping": 0.025,
                                                    "settings": {"reference": {"frictionloss": 0.9}}}}
    with pytest.raises(StandInError, match=r"puck.settings.reference.frictionloss=0.9 is outside"):
        load_puck(source, "reference")
