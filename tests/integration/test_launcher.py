"""The pip-path launcher starts the graph described in adr/graph.py as real processes and stops it cleanly."""
from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
from graph_runs import start_graph
from ros_processes import executable

from adr.graph import GRAPHS, graph_for_launch_file
from adr.launcher import node_command


def test_graph_arguments_are_validated() -> None:
    graph = graph_for_launch_file("train_sim.launch.py")
    assert graph is GRAPHS["train_sim"]
    with pytest.raises(ValueError, match="unknown argument"):
        graph.nodes({"budget_typo": "1"})
    with pytest.raises(ValueError, match="seed:=abc is not an integer"):
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
    overrides = command[command.index("-p", command.index("__node:=adr_sampler")) + 1:]
    assert any(arg.startswith("overrides:=") and "seed: 5" in arg and "env_id: adr/LunarLander-v0" in arg
               for arg in overrides), command


def test_launcher_runs_the_graph_and_stops_on_ctrl_c(ros_env: dict[str, str], tmp_path: Path) -> None:
    launcher = start_graph(tmp_path, ros_env, 100_000, "seed:=4", "instances:=1")
    try:
        # a second process watches the proposals the running graph's sampler publishes
        monitor = subprocess.run([str(executable("adr", "adr_monitor")), "--count", "4", "--timeout", "90"],
                                 env=ros_env, capture_output=True, text=True, timeout=120)
        assert monitor.returncode == 0, monitor.stderr
        proposals = [json.loads(line) for line in monitor.stdout.splitlines()]
        assert {p["env_id"] for p in proposals} == {"adr/LunarLander-v0"}
    finally:
        launcher.send_signal(signal.SIGINT)
        output, _ = launcher.communicate(timeout=120)
    assert launcher.returncode == 0, output
    for name in ("adr_sampler", "adr_sim_0", "adr_discriminator", "adr_trainer"):
        assert f"[adr_launch] started {name}" in output
    assert "checkpoint of iteration" in output  # Ctrl-C leaves a final checkpoint
    assert "Traceback" not in output
