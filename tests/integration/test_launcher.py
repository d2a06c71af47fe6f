"""The pip-path launcher starts the graph described in adr/graph.py as real processes and stops it cleanly."""
from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from adr.graph import GRAPHS, graph_for_launch_file
from adr.launcher import node_command

from ros_processes import executable


def test_graph_arguments_are_validated() -> None:
    graph = graph_for_launch_file("train_sim.launch.py")
    assert graph is GRAPHS["train_sim"]
    with pytest.raises(ValueError, match="unknown argument"):
        graph.nodes({"budget_typo": "1"})
    with pytest.raises(ValueError, match="seed:=abc is not a valid int"):
        graph.nodes({"seed": "abc"})
    with pytest.raises(ValueError, match="env:=adr/Nope-v0 is not one of"):
        graph.nodes({"env": "adr/Nope-v0"})
    with pytest.raises(ValueError, match="no graph named 'nope'"):
        graph_for_launch_file("nope.launch.py")


def test_node_command_matches_the_description() -> None:
    (sampler,) = [s for s in GRAPHS["train_sim"].nodes({"seed": "5"}) if s.name == "adr_sampler"]
    command = node_command(sampler)
    assert command[0] == str(executable("adr_sampler_node", "sampler_node"))
    assert command[command.index("-r") + 1] == "__node:=adr_sampler"
    assert "seed:=5" in command and "env_id:=adr/LunarLander-v0" in command


def test_launcher_runs_the_graph_and_stops_on_ctrl_c(ros_env: dict[str, str], tmp_path: Path) -> None:
    launcher = subprocess.Popen(
        [str(executable("adr", "adr_launch")), "adr", "train_sim.launch.py", "seed:=4",
         "--domain-id", ros_env["ROS_DOMAIN_ID"]],
        env=ros_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        monitor = subprocess.run([str(executable("adr", "adr_monitor")), "--propose", "2", "--timeout", "60"],
                                 env=ros_env, capture_output=True, text=True, timeout=90)
        assert monitor.returncode == 0, monitor.stderr
        assert '"message": "iteration 0: 2 proposals"' in monitor.stdout
    finally:
        time.sleep(0.2)
        launcher.send_signal(signal.SIGINT)
        output, _ = launcher.communicate(timeout=30)
    assert launcher.returncode == 0, output
    assert "[adr_sampler]" in output and "sampling 1-D space of adr/LunarLander-v0" in output
    assert "Traceback" not in output
