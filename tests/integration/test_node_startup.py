"""Issue 28: Ctrl-C while a graph node is still importing (a launch stopped seconds after it started) ends the node
quietly with status 0, not with a KeyboardInterrupt traceback (adr_ros.entry)."""
from __future__ import annotations

import signal
import subprocess
import time

import pytest

from graph_harness.ros_processes import executable


@pytest.mark.parametrize(("package", "name"), [("adr_sim_node", "sim_node"), ("adr_trainer_node", "trainer_node")])
def test_ctrl_c_during_the_imports_ends_the_node_quietly(package: str, name: str, ros_env: dict[str, str]) -> None:
    process = subprocess.Popen([str(executable(package, name))], env=ros_env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    time.sleep(0.5)  # its imports (torch, rclpy, simulators) take seconds
    assert process.poll() is None
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output
