"""A hostile client on the graph's DDS domain (issue 18): while a small graph trains, it sends a storm of malformed
and out-of-order messages to every topic the nodes subscribe to, and junk requests to every service. The run must
end as the same run undisturbed (sync mode equals the in-process trainer to the bit), and the viewer (a node of the
graph) and a monitor watching the same topics must survive.

The storm is generated from a seeded numpy generator (the same messages every run; their timing varies): random
lengths, NaN/inf/1e300, wrong env ids and dimension names, iterations far from the current one, forged policy
versions with weights that do not describe an actor, request paths outside the run directory. It sends nothing
that is well formed *and* in order (e.g. rewards for exactly the iteration the sampler waits for, with one finite
reward per slot): telling such a forgery from the real message needs authentication (SROS2), not validation."""
from __future__ import annotations

import re
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from graph_runs import finish, metric_rows, read_until, run_in_process, sample_rows, start_graph
from rclpy_probe import probe_node
from ros_processes import executable

from adr_interfaces.msg import ParameterSet, ParticleRewards, PolicyWeights, SampleHistogram, SamplerState, Trajectory
from adr_interfaces.srv import ProposeParameters, SaveCheckpoint
from adr_ros import qos, topics

BUDGET = 1000
FAR = 1_000  # iterations this far ahead are never the current one in a 1000-step run


class Junk:
    """Malformed or out-of-order messages of every type the graph exchanges."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def pick(self, values: list[int]) -> int:
        """One of ``values`` (Python ints: numpy would turn 2**64 - 1 into a float)."""
        return values[int(self.rng.integers(0, len(values)))]

    def floats(self, n: int | None = None) -> list[float]:
        n = int(self.rng.integers(0, 12)) if n is None else n
        pool = [np.nan, np.inf, -np.inf, 1e300, -1e300, 0.0, 1.0, -5.0]
        return [float(pool[i]) if i < len(pool) else float(self.rng.normal())
                for i in self.rng.integers(0, len(pool) + 3, n)]

    def env(self) -> str:
        return str(self.rng.choice(["", "adr/ErgoReacher-v0", "adr/NoSuchEnv-v9", "x" * 300]))

    def parameter_set(self) -> ParameterSet:
        return ParameterSet(env_id=self.env(), iteration=int(self.rng.integers(FAR, 2**32)),
                            slot=int(self.rng.integers(0, 2**32)), names=["main_engine_power", "nope"][:int(
                                self.rng.integers(0, 3))], values=self.floats(), normalized=self.floats())

    def rewards(self) -> ParticleRewards:
        n = int(self.rng.integers(0, 5))
        return ParticleRewards(iteration=int(self.rng.integers(FAR, 2**32)), slots=[int(s) for s in
                               self.rng.integers(0, 2**32, n)], rewards=self.floats(int(self.rng.integers(0, 5))),
                               metric_names=["x"], metric_values=self.floats())

    def weights(self) -> PolicyWeights:
        names = ["layers.0.weight", "layers.0.bias", "junk"][:int(self.rng.integers(0, 4))]
        offsets = sorted(int(v) for v in self.rng.integers(0, 6, len(names) + 1))
        return PolicyWeights(version=self.pick([0, 1, 2, 3, 2**62, 2**64 - 1]),
                             algorithm=str(self.rng.choice(["sac", "ddpg", "?"])),
                             obs_dim=int(self.rng.integers(0, 20)), act_dim=int(self.rng.integers(0, 5)),
                             names=names, shape_offsets=offsets, shape_data=[int(v) for v in
                                                                              self.rng.integers(0, 9, 4)],
                             data_offsets=[int(v) for v in self.rng.integers(0, 50, len(names) + 1)],
                             data=[float(np.float32(v)) for v in self.rng.normal(size=int(self.rng.integers(0, 40)))])

    def trajectory(self) -> Trajectory:
        length = int(self.rng.integers(0, 6))
        obs_dim = int(self.rng.choice([0, 8, 3]))
        return Trajectory(kind=int(self.rng.integers(0, 4)), instance_id="storm",
                          policy_version=self.pick([0, 1, 5, 2**62]), parameters=self.parameter_set(),
                          length=length, obs_dim=obs_dim, act_dim=2,
                          observations=self.floats(length * obs_dim), actions=self.floats(length * 2 + 1),
                          next_observations=self.floats(length * obs_dim), rewards=self.floats(length),
                          terminated=[bool(b) for b in self.rng.integers(0, 2, length)],
                          episode_return=float(self.floats(1)[0]), final_distance=float("nan"), solved=True)

    def sampler_state(self) -> SamplerState:
        return SamplerState(method=self.env(), iteration=int(self.rng.integers(FAR, 2**32)), names=["a"],
                            num_particles=int(self.rng.integers(0, 2**32)), particles=self.floats(),
                            spread=self.floats(1)[0], metric_names=["svpg_log_std", "y"], metric_values=self.floats())

    def histogram(self) -> SampleHistogram:
        return SampleHistogram(method="adr", iteration=int(self.rng.integers(FAR, 2**32)), names=["a", "b"],
                               bins=int(self.rng.integers(0, 5)), counts=[int(c) for c in self.rng.integers(0, 9, 7)],
                               total=int(self.rng.integers(0, 2**63)))

    def propose(self) -> ProposeParameters.Request:
        return ProposeParameters.Request(count=self.pick([1, 3, 7, 2**32 - 1]),
                                         iteration=self.pick([-7, FAR, 2**40, -2**40]))

    def save(self, run_dir: Path) -> SaveCheckpoint.Request:
        directory = str(self.rng.choice(["/etc", "/tmp", str(run_dir / ".." / "elsewhere"), "", "../../x"]))
        return SaveCheckpoint.Request(iteration=int(self.rng.integers(FAR, 2**32)), directory=directory)


def storm(node, run_dir: Path, stop: threading.Event, sent: dict[str, int]) -> None:  # noqa: ANN001
    junk = Junk(seed=18)
    publishers: dict[str, tuple[object, Callable[[], object]]] = {
        "proposals": (node.create_publisher(ParameterSet, topics.PROPOSALS, qos.RELIABLE_HISTORY), junk.parameter_set),
        "rewards": (node.create_publisher(ParticleRewards, topics.PARTICLE_REWARDS, qos.RELIABLE_HISTORY),
                    junk.rewards),
        "weights": (node.create_publisher(PolicyWeights, topics.POLICY_WEIGHTS, qos.LATCHED), junk.weights),
        "trajectories": (node.create_publisher(Trajectory, topics.TRAJECTORIES, qos.RELIABLE_STREAM),
                         junk.trajectory),
        "sampler_state": (node.create_publisher(SamplerState, topics.SAMPLER_STATE, qos.LATCHED), junk.sampler_state),
        "histogram": (node.create_publisher(SampleHistogram, topics.SAMPLE_HISTOGRAM, qos.LATCHED), junk.histogram),
    }
    propose = node.create_client(ProposeParameters, topics.PROPOSE_SERVICE)
    saves = [node.create_client(SaveCheckpoint, topics.SAMPLER_SAVE_CHECKPOINT),
             node.create_client(SaveCheckpoint, topics.DISCRIMINATOR_SAVE_CHECKPOINT)]
    names = list(publishers)
    while not stop.is_set():
        name = names[int(junk.rng.integers(0, len(names)))]
        publisher, make = publishers[name]
        publisher.publish(make())
        sent[name] = sent.get(name, 0) + 1
        if junk.rng.random() < 0.1 and propose.service_is_ready():
            propose.call_async(junk.propose())
            sent["propose"] = sent.get("propose", 0) + 1
        if junk.rng.random() < 0.05:
            client = saves[int(junk.rng.integers(0, 2))]
            if client.service_is_ready():
                client.call_async(junk.save(run_dir))
                sent["save_checkpoint"] = sent.get("save_checkpoint", 0) + 1
        time.sleep(0.01)


def test_a_storm_of_malformed_messages_changes_nothing(ros_env: dict[str, str], ros_domain_id: int,
                                                       tmp_path: Path) -> None:
    reference = tmp_path / "in_process"
    run_in_process(reference, BUDGET)
    run_dir = tmp_path / "graph"
    monitor = subprocess.Popen([str(executable("adr", "adr_monitor")), "--count", "1000000", "--timeout", "600"],
                               env=ros_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stop, sent = threading.Event(), {}
    with probe_node("hostile_client", ros_domain_id) as node:
        graph = start_graph(run_dir, ros_env, BUDGET, "instances:=2", "viewer:=true", "viewer_port:=0")
        seen: list[str] = []
        read_until(graph, r"adr_trainer\]: adr on", 120, seen)
        storming = threading.Thread(target=storm, args=(node, run_dir, stop, sent), daemon=True)
        storming.start()
        try:
            output = finish(graph, seen)
        finally:
            stop.set()
            storming.join(timeout=10)
    monitor_alive = monitor.poll() is None
    monitor.terminate()
    _, monitor_errors = monitor.communicate(timeout=30)
    assert graph.returncode == 0, output
    assert sum(sent.values()) > 300 and len(sent) == 8, sent
    assert metric_rows(run_dir) == metric_rows(reference)  # nothing got in, nothing was displaced
    assert sample_rows(run_dir) == sample_rows(reference)
    assert "Traceback" not in output, output
    assert "started adr_viewer" in output and not re.search(r"adr_viewer exited with code [^0]", output), output
    assert monitor_alive and "Traceback" not in monitor_errors, monitor_errors
    written = {p.resolve() for p in tmp_path.rglob("*") if p.is_file()}
    assert all(run_dir in p.parents or reference in p.parents for p in written), "a service wrote outside its run"
    assert not Path("/etc/sampler-000000.pt").exists()
