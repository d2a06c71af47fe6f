"""Two real processes from the workspace's entry points talk over Fast DDS on loopback:
a service call round-trips and custom messages arrive on a topic."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from graph_harness.ros_processes import executable, running
from graph_harness.signing import key_parameter, run_key


def test_sampler_service_and_topic_round_trip(ros_env: dict[str, str], tmp_path: Path) -> None:
    key = run_key(tmp_path)
    sampler = [executable("adr_sampler_node", "sampler_node"), "--ros-args", "-p", f"run_dir:={tmp_path}",
               "-p", "overrides:='{env_id: adr/LunarLander-v0, sampler: udr, seed: 7, svpg.num_particles: 2, "
                     "svpg.rollout_length: 2}'", *key_parameter(key)]
    monitor = [executable("adr", "adr_monitor"), "--propose", "4", "--timeout", "60", "--key-file", str(key)]
    with running(sampler, ros_env, tmp_path / "sampler.log") as sampler_process:
        result = subprocess.run([str(c) for c in monitor], env=ros_env, capture_output=True, text=True, timeout=90)
        assert sampler_process.poll() is None, (tmp_path / "sampler.log").read_text()
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    service_replies = [line for line in lines if "service" in line]
    proposals = [line for line in lines if line.get("topic") == "adr/proposals"]

    assert service_replies == [
        {"service": "adr/propose_parameters", "message": "iteration 0: 4 proposals", "proposals": 4}
    ]
    assert sorted(p["slot"] for p in proposals) == [0, 1, 2, 3]
    for proposal in proposals:
        assert proposal["env_id"] == "adr/LunarLander-v0" and proposal["verified"]
        assert proposal["iteration"] == 0
        (engine_power,) = proposal["values"].values()
        (unit,) = proposal["normalized"]
        assert 8.0 <= engine_power <= 20.0
        assert abs(engine_power - (8.0 + 12.0 * unit)) < 1e-9  # physical = low + u * (high - low), train [8, 20]
    assert len({p["values"]["main_engine_power"] for p in proposals}) == 4


def test_sampler_is_silent_in_another_domain(ros_env: dict[str, str], tmp_path: Path) -> None:
    """The isolation the other tests rely on: a client in another domain does not see the sampler."""
    other = dict(ros_env, ROS_DOMAIN_ID=str((int(ros_env["ROS_DOMAIN_ID"]) + 1) % 200))
    key = run_key(tmp_path)
    sampler = [executable("adr_sampler_node", "sampler_node"), "--ros-args", "-p", f"run_dir:={tmp_path}",
               *key_parameter(key)]
    with running(sampler, ros_env, tmp_path / "sampler.log"):
        result = subprocess.run([str(executable("adr", "adr_monitor")), "--propose", "1", "--timeout", "3",
                                 "--key-file", str(key)], env=other, capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert "no sampler serves adr/propose_parameters" in result.stderr
