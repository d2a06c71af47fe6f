"""mode:=probe of train_sim.launch.py: adr-probe as a node graph, file for file the in-process probe's result."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from adr_core.probe.cli import main as probe_main
from graph_harness.graph_runs import overrides_arg
from graph_harness.ros_processes import executable

HEURISTIC = "adr_core.probe.controllers:lunar_lander_heuristic"
SMALL = {"svpg.num_particles": 2, "max_episode_steps": 400, "discriminator.steps_per_transition": 0.02,
         "discriminator.hidden_size": 32}


def test_probe_graph_writes_what_adr_probe_writes(ros_env: dict[str, str], tmp_path: Path) -> None:
    in_process = tmp_path / "in_process"
    sets = [arg for key, value in SMALL.items() for arg in ("--set", f"{key}={value}")]
    assert probe_main(["--policy", HEURISTIC, "--out", str(in_process), "--iterations", "3", "--workers", "1",
                       *sets]) == 0
    graph_dir = tmp_path / "graph"
    command = [str(executable("adr", "adr_launch")), "adr", "train_sim.launch.py", "mode:=probe",
               f"policy:={HEURISTIC}", "iterations:=3", "instances:=1", f"run_dir:={graph_dir}",
               overrides_arg(SMALL), "--domain-id", ros_env["ROS_DOMAIN_ID"]]
    result = subprocess.run(command, env=ros_env, capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Traceback" not in output
    for name in ("failure_map.csv", "proposals.csv"):  # same proposals, rewards and episodes, to the bit
        assert (graph_dir / name).read_text() == (in_process / name).read_text(), name
    graph_focus, focus = (json.loads((d / "focus.json").read_text()) for d in (graph_dir, in_process))
    for key in ("share_whole", "ratio_second_half", "ratio_last_quarter", "uniform_share", "region"):
        assert graph_focus[key] == focus[key], key
    assert (graph_dir / "probe.png").stat().st_size > 10_000


def test_probe_mode_refuses_a_missing_or_broken_policy(ros_env: dict[str, str], tmp_path: Path) -> None:
    launcher = str(executable("adr", "adr_launch"))
    missing = subprocess.run([launcher, "adr", "train_sim.launch.py", "mode:=probe", f"run_dir:={tmp_path}"],
                             env=ros_env, capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and "mode:=probe needs policy:=" in missing.stdout + missing.stderr
    broken = subprocess.run([launcher, "adr", "train_sim.launch.py", "mode:=probe", "policy:=no_such_module_q:f",
                             "instances:=1", f"run_dir:={tmp_path / 'b'}", "--domain-id", ros_env["ROS_DOMAIN_ID"]],
                            env=ros_env, capture_output=True, text=True, timeout=120)
    text = broken.stdout + broken.stderr
    assert broken.returncode != 0 and "module 'no_such_module_q' does not import" in text
