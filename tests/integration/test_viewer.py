"""adr_viewer as a real process over Fast DDS: typed messages from a publisher node reach the web page (checked in
headless Chromium: the rendered DOM shows them; a screenshot is saved), the particles come out as rviz markers, and
the rviz2 config names the topics the graph publishes."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import yaml
from ament_index_python.packages import get_package_share_directory
from rclpy_probe import probe_node, wait_until
from std_msgs.msg import Float64
from visualization_msgs.msg import Marker, MarkerArray

from adr_interfaces.msg import SampleHistogram, SamplerState
from adr_ros import qos, topics
from adr_ros.arrays import to_field
from graph_harness.ros_processes import executable, running
from graph_harness.signing import key_parameter, run_key, signer

pytestmark = pytest.mark.integration

NAMES = ["puck_frictionloss", "puck_damping"]
PARTICLES = np.array([[0.1, 0.2], [0.5, 0.9], [0.75, 0.25]])
COUNTS = np.array([[3, 0, 1, 8], [0, 2, 2, 8]], dtype=np.uint64)
RETURNS = [-120.5, -80.25, 123.5]
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1200,900", "--virtual-time-budget=5000"]
ARTIFACTS = "ADR_TEST_ARTIFACTS"  # set to a folder to keep the screenshot (else it stays in pytest's tmp_path)


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("headless Chromium is not installed (Debian package 'chromium', installed by scripts/setup.sh)")


def served_url(log: Path, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = re.search(r"serving (http://[\d.]+:\d+/)", log.read_text(errors="replace") if log.exists() else "")
        if match:
            return match.group(1)
        time.sleep(0.1)
    raise AssertionError(f"the viewer never said where it serves; log:\n{log.read_text(errors='replace')}")


def fetch_state(url: str) -> dict:
    with urllib.request.urlopen(url + "state.json", timeout=5) as response:
        return json.loads(response.read())


def publish_fake_graph(node) -> None:
    histogram = SampleHistogram(method="adr", iteration=7, names=NAMES, bins=4, counts=COUNTS.reshape(-1).tolist(),
                                total=12)
    state = SamplerState(method="adr", iteration=7, names=NAMES, num_particles=3,
                         particles=to_field(PARTICLES, np.float64), spread=0.4321)
    node.create_publisher(SampleHistogram, topics.SAMPLE_HISTOGRAM, qos.LATCHED).publish(histogram)
    node.create_publisher(SamplerState, topics.SAMPLER_STATE, qos.LATCHED).publish(state)


def test_page_shows_live_data_and_particles_become_markers(ros_env, ros_domain_id, tmp_path):
    browser = chromium()
    log = tmp_path / "viewer.log"
    viewer = [executable("adr_viewer", "viewer_node"), "--ros-args", "-p", "port:=0", "-p", "marker_size:=0.5",
              "-p", "marker_origin:=[1.0, 2.0, 3.0]"]
    with running(viewer, ros_env, log), probe_node("fake_graph", ros_domain_id) as node:
        url = served_url(log)
        markers: list[MarkerArray] = []
        node.create_subscription(MarkerArray, "adr/particle_markers", markers.append, qos.LATCHED)
        publish_fake_graph(node)
        metric = node.create_publisher(Float64, "adr/metrics/return_mean", qos.METRICS)
        reward = node.create_publisher(Float64, "adr/metrics/sampler_reward_mean", qos.METRICS)
        custom = node.create_publisher(Float64, "adr/metrics/custom_rate", qos.METRICS)  # not in the known list

        def received() -> bool:
            state = fetch_state(url)
            values = state["metrics"].get("return_mean", {}).get("v", [])
            return (state["histogram"] is not None and state["particles"] is not None and values[-1:] == [RETURNS[-1]]
                    and "custom_rate" in state["metrics"] and "sampler_reward_mean" in state["metrics"])

        deadline = time.monotonic() + 20.0
        while not received():  # best-effort metrics: publish until the viewer has them (discovery takes a moment)
            assert time.monotonic() < deadline, f"viewer state: {fetch_state(url)}"
            for value in RETURNS:
                metric.publish(Float64(data=value))
                time.sleep(0.02)
            reward.publish(Float64(data=-0.693))
            custom.publish(Float64(data=42.0))
            time.sleep(0.3)

        state = fetch_state(url)
        assert state["histogram"]["counts"] == COUNTS.tolist() and state["histogram"]["names"] == NAMES
        np.testing.assert_allclose(state["particles"]["points"], PARTICLES)
        assert state["particles"]["spread"] == pytest.approx(0.4321)

        wait_until(lambda: bool(markers), 10.0, "particle markers")
        spheres = next(m for m in markers[-1].markers if m.type == Marker.SPHERE_LIST)
        positions = np.array([[p.x, p.y, p.z] for p in spheres.points])
        np.testing.assert_allclose(positions, [[1.0 + 0.5 * u, 2.0 + 0.5 * v, 3.0] for u, v in PARTICLES])
        assert spheres.header.frame_id == "world"
        assert {m.text for m in markers[-1].markers if m.type == Marker.TEXT_VIEW_FACING} >= set(NAMES)

        profile = tmp_path / "chromium-profile"
        dom = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
                             capture_output=True, text=True, timeout=60).stdout
        screenshot = tmp_path / "viewer.png"
        subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={screenshot}", url],
                       capture_output=True, timeout=60)

    assert '<dd id="iteration">7</dd>' in dom and '<dd id="method">adr</dd>' in dom
    assert '<dd id="total">12</dd>' in dom and '<dd id="particle-count">3</dd>' in dom
    assert '<dd id="spread">0.4321</dd>' in dom
    assert len(re.findall(r'<circle class="particle" cx="[\d.]+"', dom)) == 3  # rendered, not the script's template
    bars = re.findall(r'<rect class="bar" data-dim="(\d)" data-bin="(\d)" data-count="(\d+)"', dom)
    assert [int(c) for _, _, c in bars] == COUNTS.reshape(-1).tolist()
    assert re.search(r'id="returns-last-return_mean">123.5<', dom)
    assert re.search(r'<tr id="metric-custom_rate"><td>custom_rate</td><td class="last">42</td>', dom)
    assert 'data-metric="sampler_reward_mean"' in dom
    assert screenshot.stat().st_size > 10_000
    if os.environ.get(ARTIFACTS):
        Path(os.environ[ARTIFACTS]).mkdir(parents=True, exist_ok=True)
        shutil.copy(screenshot, Path(os.environ[ARTIFACTS]) / "viewer.png")


def test_with_the_runs_key_the_page_shows_only_signed_sampler_messages(ros_env, ros_domain_id, tmp_path):
    key = run_key(tmp_path)
    log = tmp_path / "viewer.log"
    viewer = [executable("adr_viewer", "viewer_node"), "--ros-args", "-p", "port:=0", "-p", "run_id:=run-a",
              *key_parameter(key)]
    forged = SampleHistogram(run_id="run-a", method="adr", iteration=99, names=NAMES, bins=4,
                             counts=COUNTS.reshape(-1).tolist(), total=12)
    with running(viewer, ros_env, log), probe_node("fake_graph", ros_domain_id) as node:
        url = served_url(log)
        publisher = node.create_publisher(SampleHistogram, topics.SAMPLE_HISTOGRAM, qos.LATCHED)
        deadline = time.monotonic() + 10.0
        while "dropped a message on SampleHistogram: unsigned" not in log.read_text(errors="replace"):
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            publisher.publish(forged)  # unsigned: counted and dropped
            time.sleep(0.3)
        assert fetch_state(url)["histogram"] is None
        good = signer(key, "run-a").sign(SampleHistogram(run_id="run-a", method="adr", iteration=7, names=NAMES,
                                                         bins=4, counts=COUNTS.reshape(-1).tolist(), total=12))
        publisher.publish(good)
        wait_until(lambda: (fetch_state(url)["histogram"] or {}).get("iteration") == 7, 10.0, "the signed histogram")


def test_busy_port_is_a_clear_startup_error(ros_env, tmp_path):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        log = tmp_path / "viewer.log"
        command = [executable("adr_viewer", "viewer_node"), "--ros-args", "-p", f"port:={port}"]
        with running(command, ros_env, log) as process:
            assert process.wait(timeout=20) == 1
    assert f"cannot serve the page on 127.0.0.1:{port}" in log.read_text()


def test_rviz_config_shows_what_the_graph_publishes():
    config = yaml.safe_load((Path(get_package_share_directory("adr_viewer")) / "config" / "adr.rviz").read_text())
    manager = config["Visualization Manager"]
    displays = {d["Class"]: d for d in manager["Displays"]}
    assert manager["Global Options"]["Fixed Frame"] == "world"  # the sim_node's goal_frame_id default
    assert displays["rviz_default_plugins/RobotModel"]["Description Topic"]["Value"] == "/robot_description"
    assert displays["rviz_default_plugins/PointStamped"]["Topic"]["Value"] == f"/{topics.sim_instance_name(0)}/goal"
    markers = displays["rviz_default_plugins/MarkerArray"]["Topic"]
    assert markers["Value"] == "/adr/particle_markers" and markers["Durability Policy"] == "Transient Local"
