"""A hostile client on the graph's DDS domain (issue 18): while a small graph trains, it sends a storm of malformed
and out-of-order messages to every topic the nodes subscribe to, junk requests to every service and junk rollout goals
to the simulator instances' actions. The run must end as the same run undisturbed (sync mode equals the in-process
trainer to the bit), and the viewer (a node of the graph) and a monitor watching the same topics must survive.

The storm is generated from a seeded numpy generator (the same messages every run; their timing varies): random
lengths, NaN/inf/1e300, wrong env ids and dimension names, iterations far from the current one, forged policy
versions with weights that do not describe an actor, request paths outside the run directory; most carry the
run's id (so the checks behind the run id are stormed too), the others another run's. A replayer also sends every
real trajectory, reward, sampler state and policy-weights message straight back under another run's id: well formed
and in order, as a second run on the same domain would send them. Apart from those, it sends nothing that is well
formed *and* in order (e.g. rewards for exactly the iteration the sampler waits for, with one finite reward per slot,
under this run's id): telling such a forgery from the real message needs authentication (SROS2), not validation.
A forger (issue 30) sends what the graph's rules can tell apart although it is well formed, under the run's own id
and aimed at what is awaited now: on every real proposal, rollouts for that very slot made before the real one
(policy version 2^62, a setting never dispatched, rewards of 1e6 per step); on every real iteration's rewards, a
copy whose statistics claim the trainer's columns and rewards of -1e300 for the iteration the sampler awaits next;
and a second propose client asking for "whichever iteration is current".

Issue 47 (every message is signed with the run's key, adr_ros.signing): the forger, who has no key, also sends what
no in-band rule could refuse. Four copies of every real trajectory (two verbatim, signature and all: replays; two
with their rewards changed under the stolen signature), which used to make the discriminator refuse the real ones
as too many copies; plausible rewards (-0.7 per slot) for exactly the iteration the sampler awaits, unsigned and under
a real message's stolen signature, which the sampler used to apply; and a flood (~1000 unsigned messages/s on the
rewards, trajectories and sampler-state topics for the whole run), which used to displace the real rewards from the
nodes' queues. A UDR run gets "next iteration" propose calls, which used to push its sampler ahead of its trainer.
Each run equals the clean run of its seed to the bit."""
from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from rclpy.action import ActionClient
from rclpy_probe import InSpinThread, probe_node

from adr_core.rollout import Trajectory as CoreTrajectory
from adr_interfaces.action import RollOut
from adr_interfaces.msg import ParameterSet, ParticleRewards, PolicyWeights, SampleHistogram, SamplerState, Trajectory
from adr_interfaces.srv import ProposeParameters, SaveCheckpoint
from adr_ros import qos, topics, trajectories
from adr_ros.arrays import from_field, to_field
from graph_harness.graph_runs import finish, metric_rows, read_until, run_in_process, sample_rows, start_graph
from graph_harness.ros_processes import executable
from graph_harness.signing import run_key, signer

BUDGET = 1000
SLOTS = 2  # TINY: 2 particles, one rollout each
FLOOD_RATE = os.environ.get("ADR_FLOOD_RATE", "1200")  # the flood (~30k in 25 s); 0: unlimited
RUN_ID = "storm-run"  # the graph's run id (run_id:=): most junk carries it, the replayer another
# the trainer's wait for the sampler / discriminator: an iteration under the flood on a machine running other CPU-bound
# work beside the suite took 112 s, past the default 60 s (the run then stops resumable: a correct outcome, not the
# one this test checks)
SLOW_MACHINE_S = 300
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

    def run_id(self) -> str:
        return str(self.rng.choice([RUN_ID, RUN_ID, RUN_ID, "", "another-run", "x" * 100]))

    def env(self) -> str:
        return str(self.rng.choice(["", "adr/ErgoReacher-v0", "adr/NoSuchEnv-v9", "x" * 300]))

    def parameter_set(self) -> ParameterSet:
        return ParameterSet(run_id=self.run_id(), env_id=self.env(), iteration=int(self.rng.integers(FAR, 2**32)),
                            slot=int(self.rng.integers(0, 2**32)), names=["main_engine_power", "nope"][:int(
                                self.rng.integers(0, 3))], values=self.floats(), normalized=self.floats())

    def rewards(self) -> ParticleRewards:
        n = int(self.rng.integers(0, 5))
        return ParticleRewards(run_id=self.run_id(), iteration=int(self.rng.integers(FAR, 2**32)),
                               slots=[int(s) for s in self.rng.integers(0, 2**32, n)],
                               rewards=self.floats(int(self.rng.integers(0, 5))),
                               metric_names=["x"], metric_values=self.floats())

    def weights(self) -> PolicyWeights:
        names = ["layers.0.weight", "layers.0.bias", "junk"][:int(self.rng.integers(0, 4))]
        offsets = sorted(int(v) for v in self.rng.integers(0, 6, len(names) + 1))
        return PolicyWeights(run_id=self.run_id(), version=self.pick([0, 1, 2, 3, 2**62, 2**64 - 1]),
                             algorithm=str(self.rng.choice(["sac", "ddpg", "?"])),
                             obs_dim=int(self.rng.integers(0, 20)), act_dim=int(self.rng.integers(0, 5)),
                             names=names, shape_offsets=offsets, shape_data=[int(v) for v in
                                                                              self.rng.integers(0, 9, 4)],
                             data_offsets=[int(v) for v in self.rng.integers(0, 50, len(names) + 1)],
                             data=[float(np.float32(v)) for v in self.rng.normal(size=int(self.rng.integers(0, 40)))])

    def trajectory(self) -> Trajectory:
        length = int(self.rng.integers(0, 6))
        obs_dim = int(self.rng.choice([0, 8, 3]))
        return Trajectory(run_id=self.run_id(), kind=int(self.rng.integers(0, 4)), instance_id="storm",
                          policy_version=self.pick([0, 1, 5, 2**62]), parameters=self.parameter_set(),
                          length=length, obs_dim=obs_dim, act_dim=2,
                          observations=self.floats(length * obs_dim), actions=self.floats(length * 2 + 1),
                          next_observations=self.floats(length * obs_dim), rewards=self.floats(length),
                          terminated=[bool(b) for b in self.rng.integers(0, 2, length)],
                          episode_return=float(self.floats(1)[0]), final_distance=float("nan"), solved=True)

    def sampler_state(self) -> SamplerState:
        return SamplerState(run_id=self.run_id(), method=self.env(), iteration=int(self.rng.integers(FAR, 2**32)),
                            names=["a"],
                            num_particles=int(self.rng.integers(0, 2**32)), particles=self.floats(),
                            spread=self.floats(1)[0], metric_names=["svpg_log_std", "y"], metric_values=self.floats())

    def histogram(self) -> SampleHistogram:
        return SampleHistogram(run_id=self.run_id(), method="adr", iteration=int(self.rng.integers(FAR, 2**32)),
                               names=["a", "b"],
                               bins=int(self.rng.integers(0, 5)), counts=[int(c) for c in self.rng.integers(0, 9, 7)],
                               total=int(self.rng.integers(0, 2**63)))

    def propose(self) -> ProposeParameters.Request:
        return ProposeParameters.Request(run_id=self.run_id(), count=self.pick([1, 3, 7, 2**32 - 1]),
                                         iteration=self.pick([-7, FAR, 2**40, -2**40]))

    def goal(self) -> RollOut.Goal:
        return RollOut.Goal(parameters=self.parameter_set(), with_reference=bool(self.rng.integers(0, 2)),
                            min_policy_version=self.pick([0, 1, 2**62]), newest_policy_version=self.pick([0, 1, 2**62]))

    def save(self, run_dir: Path) -> SaveCheckpoint.Request:
        directory = str(self.rng.choice(["/etc", "/tmp", str(run_dir / ".." / "elsewhere"), "", "../../x"]))
        return SaveCheckpoint.Request(run_id=self.run_id(), iteration=int(self.rng.integers(FAR, 2**32)),
                                      directory=directory)


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
    spin_thread = InSpinThread(node)  # action goals are sent from the probe's executor thread (rclpy_probe.py)
    roll_outs = [ActionClient(node, RollOut, topics.roll_out_action(topics.sim_instance_name(i))) for i in range(2)]
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
            action = roll_outs[int(junk.rng.integers(0, 2))]
            if action.server_is_ready():
                spin_thread.call(action.send_goal_async, junk.goal())
                sent["roll_out"] = sent.get("roll_out", 0) + 1
        if junk.rng.random() < 0.05:
            client = saves[int(junk.rng.integers(0, 2))]
            if client.service_is_ready():
                client.call_async(junk.save(run_dir))
                sent["save_checkpoint"] = sent.get("save_checkpoint", 0) + 1
        time.sleep(0.01)


REPLAYED = {"trajectories": (Trajectory, topics.TRAJECTORIES, qos.RELIABLE_STREAM),
            "rewards": (ParticleRewards, topics.PARTICLE_REWARDS, qos.RELIABLE_HISTORY),
            "sampler_state": (SamplerState, topics.SAMPLER_STATE, qos.RELIABLE_HISTORY),
            "weights": (PolicyWeights, topics.POLICY_WEIGHTS, qos.LATCHED)}


def replayer(node, sent: dict[str, int]) -> None:  # noqa: ANN001
    """Every real message of these topics, published again at once under another run's id."""
    def replay(name: str, publisher, msg) -> None:  # noqa: ANN001
        if msg.run_id != RUN_ID:
            return  # the storm's own, or one replayed already
        msg.run_id = "replayed-run"
        if isinstance(msg, Trajectory):
            msg.parameters.run_id = "replayed-run"
        if isinstance(msg, PolicyWeights):
            msg.version = min(msg.version + 1, 2**64 - 1)  # newer than the real one: taken, it would replace it
        publisher.publish(msg)
        sent["replayed_" + name] = sent.get("replayed_" + name, 0) + 1

    for name, (kind, topic, profile) in REPLAYED.items():
        publisher = node.create_publisher(kind, topic, profile)
        node.create_subscription(kind, topic, lambda msg, n=name, p=publisher: replay(n, p, msg), profile)


def forger(node, sent: dict[str, int]) -> None:  # noqa: ANN001
    """Well-formed forgeries under the run's own id that the graph's rules refuse (module docstring)."""
    rng = np.random.default_rng(30)
    trajectory_pub = node.create_publisher(Trajectory, topics.TRAJECTORIES, qos.RELIABLE_STREAM)
    rewards_pub = node.create_publisher(ParticleRewards, topics.PARTICLE_REWARDS, qos.RELIABLE_HISTORY)
    propose = node.create_client(ProposeParameters, topics.PROPOSE_SERVICE)

    def count(name: str) -> None:
        sent["forged_" + name] = sent.get("forged_" + name, 0) + 1

    def on_proposal(proposal: ParameterSet) -> None:
        if proposal.run_id != RUN_ID:
            return
        values = from_field(proposal.values, np.float64)
        for variant in ("version", "setting", "reward"):
            length = 5
            rewards = np.full(length, 1e6 if variant == "reward" else -1.0, np.float32)
            forged = CoreTrajectory(
                obs=rng.normal(size=(length, 8)).astype(np.float32), actions=rng.uniform(-1, 1, (length, 2)).astype(
                    np.float32), next_obs=rng.normal(size=(length, 8)).astype(np.float32), rewards=rewards,
                terminated=np.arange(length) == length - 1,
                params=values + (0.5 if variant == "setting" else 0.0),
                params_normalized=from_field(proposal.normalized, np.float64), kind="randomized",
                iteration=int(proposal.iteration), slot=int(proposal.slot),
                policy_version=2**62 if variant == "version" else 0, episode_return=float(rewards.sum()),
                length=length)
            trajectory_pub.publish(trajectories.to_msg(forged, env_id=proposal.env_id, names=list(proposal.names),
                                                       instance_id="forger", run_id=RUN_ID))
            count("trajectories")
        if propose.service_is_ready():
            propose.call_async(ProposeParameters.Request(run_id=RUN_ID, count=0, iteration=-1))
            count("propose")

    def on_rewards(real: ParticleRewards) -> None:
        if real.run_id != RUN_ID or "discriminator_loss" not in real.metric_names:
            return  # not the discriminator's (a forgery, this one's included: no feedback loop)
        stolen["rewards"] = copy.deepcopy(real.signature)
        n = len(real.slots)
        rewards_pub.publish(ParticleRewards(run_id=RUN_ID, iteration=real.iteration, slots=real.slots,
                                            rewards=real.rewards, metric_names=["return_mean", "iteration",
                                                                                "critic_loss"],
                                            metric_values=to_field(np.array([12345.0, 777.0, 5e10]), np.float64)))
        rewards_pub.publish(ParticleRewards(run_id=RUN_ID, iteration=real.iteration + 1, slots=real.slots,
                                            rewards=to_field(np.full(n, -1e300), np.float64)))
        count("rewards")

    stolen: dict[str, object] = {}
    copied: set[tuple[str, int]] = set()

    def awaited_rewards(proposal: ParameterSet) -> None:
        """Plausible rewards for the iteration the sampler awaits (the one it just proposed), once per iteration:
        unsigned, and under the last real rewards' signature."""
        if proposal.run_id != RUN_ID or proposal.slot != 0:
            return
        slots = list(range(SLOTS))
        for signature in (None, stolen.get("rewards")):
            forged = ParticleRewards(run_id=RUN_ID, iteration=proposal.iteration, slots=slots,
                                     rewards=to_field(np.full(SLOTS, -0.7), np.float64))
            if signature is not None:
                forged.signature = signature
            rewards_pub.publish(forged)
            count("awaited_rewards")

    def copies(real: Trajectory) -> None:
        """Four copies of a real trajectory: two replays (signature intact), two altered under its signature."""
        key = (real.signature.sender, real.signature.sequence)
        if real.run_id != RUN_ID or real.instance_id == "forger" or not real.signature.sender or key in copied:
            return  # not the run's, unsigned (the storm's), or copied already (its own copies come back to it)
        copied.add(key)
        for altered in (False, False, True, True):
            forged = copy.deepcopy(real)
            if altered:
                forged.rewards = to_field(np.full(len(real.rewards), 1e3, np.float32), np.float32)
            trajectory_pub.publish(forged)
            count("copies")

    node.create_subscription(ParameterSet, topics.PROPOSALS, on_proposal, qos.RELIABLE_STREAM)
    node.create_subscription(ParameterSet, topics.PROPOSALS, awaited_rewards, qos.RELIABLE_STREAM)
    node.create_subscription(ParticleRewards, topics.PARTICLE_REWARDS, on_rewards, qos.RELIABLE_STREAM)
    node.create_subscription(Trajectory, topics.TRAJECTORIES, copies, qos.RELIABLE_STREAM)


def start_flood(env: dict[str, str]) -> subprocess.Popen:
    """graph_harness.flood in its own process: unsigned messages on the rewards, sampler-state and trajectory topics
    under the run's id at the issue's rate (~1200/s: ~30k in 25 s, which displaced the real rewards from KEEP_LAST
    readers), until stopped. ADR_FLOOD_RATE=0 floods as fast as it can (~20k/s): on 2 cores that starves the graph
    and the real rewards can come after the trainer's wait (docs/reliability.md, availability)."""
    return subprocess.Popen([sys.executable, "-m", "graph_harness.flood", "--run-id", RUN_ID, "--rate", FLOOD_RATE],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def stop_flood(process: subprocess.Popen) -> int:
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=30)
    return int(json.loads(output.strip().splitlines()[-1])["flood_sent"])


def test_a_storm_of_malformed_messages_changes_nothing(ros_env: dict[str, str], ros_domain_id: int,
                                                       tmp_path: Path) -> None:
    budget = 2 * BUDGET  # the storm's subscriptions start after 'adr on' and need discovery: with 1000 steps it saw
    # 2-3 of the run's iterations on an idle machine, under the copies and awaited-rewards floors below
    reference = tmp_path / "in_process"
    run_in_process(reference, budget)
    run_dir = tmp_path / "graph"
    # the monitor must outlive the graph's longest allowed run (finish's 3 x SLOW_MACHINE_S), or its own timeout ends
    # it and it reads as dead
    monitor = subprocess.Popen([str(executable("adr", "adr_monitor")), "--count", "1000000",
                                "--timeout", str(4 * SLOW_MACHINE_S)],
                               env=ros_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stop, sent = threading.Event(), {}
    with probe_node("hostile_client", ros_domain_id) as node:
        replayer(node, sent)
        forger(node, sent)
        graph = start_graph(run_dir, ros_env, budget, "instances:=2", "viewer:=true", "viewer_port:=0",
                            f"run_id:={RUN_ID}", f"service_timeout:={SLOW_MACHINE_S}")
        seen: list[str] = []
        read_until(graph, r"adr_trainer\]: adr on", 120, seen)
        storming = threading.Thread(target=storm, args=(node, run_dir, stop, sent), daemon=True)
        flooding = start_flood(ros_env)
        storming.start()
        try:
            output = finish(graph, seen, timeout=3 * SLOW_MACHINE_S)
        finally:
            stop.set()
            storming.join(timeout=10)
            sent["flood"] = stop_flood(flooding)
    monitor_alive = monitor.poll() is None
    monitor.terminate()
    _, monitor_errors = monitor.communicate(timeout=30)
    assert graph.returncode == 0, output
    assert sum(sent.values()) > 300 and len(sent) == 9 + len(REPLAYED) + 6, sent
    assert sent["forged_trajectories"] >= 3 * 8 and sent["forged_rewards"] >= 2, sent
    # copies: 4 per real trajectory the hostile client read; under the unlimited flood it reads fewer than the run
    # sends (24 and 32 seen), so one iteration's 4 trajectories is the floor asked for
    assert sent["forged_copies"] >= 4 * 4 and sent["forged_awaited_rewards"] >= 2 * 4 and sent["flood"] > 3000, sent
    for dropped in ("unsigned", "bad_signature", "replayed"):  # first of each kind logged (and counted)
        assert re.search(rf"dropped a message on \S+: {dropped}", output), (dropped, output)
    assert metric_rows(run_dir) == metric_rows(reference)  # nothing got in, nothing was displaced
    assert sample_rows(run_dir) == sample_rows(reference)
    assert "Traceback" not in output, output
    assert "started adr_viewer" in output and not re.search(r"adr_viewer exited with code [^0]", output), output
    assert monitor_alive and "Traceback" not in monitor_errors, monitor_errors
    written = {p.resolve() for p in tmp_path.rglob("*") if p.is_file()}
    assert all(run_dir in p.parents or reference in p.parents for p in written), "a service wrote outside its run"
    assert not Path("/etc/sampler-000000.pt").exists()


def test_next_iteration_calls_without_the_key_do_not_push_a_udr_sampler(ros_env: dict[str, str],
                                                                          ros_domain_id: int, tmp_path: Path) -> None:
    """UDR awaits no rewards, so before the key a propose call for the next iteration advanced its sampler (issue 47:
    to iteration 1452; the trainer's checkpoint then failed). Now the calls, unsigned or signed with another key,
    are dropped first thing; the run equals the in-process one."""
    budget = 4 * BUDGET  # long enough for the client to discover the sampler's service: a UDR run of BUDGET steps
    # could finish first since the trainer keeps two goals at each instance (seen: nothing sent)
    reference = tmp_path / "in_process"
    run_in_process(reference, budget, sampler="udr")
    run_dir = tmp_path / "graph"
    wrong_key = signer(run_key(tmp_path / "other"), RUN_ID)  # a key, not the run's
    sent = {"unsigned": 0, "wrong_key": 0}
    with probe_node("pushing_client", ros_domain_id) as node:
        propose = node.create_client(ProposeParameters, topics.PROPOSE_SERVICE)
        pushed = {"iteration": 0}

        def on_proposal(proposal: ParameterSet) -> None:
            pushed["iteration"] = max(pushed["iteration"], int(proposal.iteration) + 1)

        node.create_subscription(ParameterSet, topics.PROPOSALS, on_proposal, qos.RELIABLE_STREAM)
        graph = start_graph(run_dir, ros_env, budget, "instances:=1", "method:=udr", f"run_id:={RUN_ID}",
                            f"service_timeout:={SLOW_MACHINE_S}")
        seen: list[str] = []
        read_until(graph, r"adr_trainer\]: udr on", 120, seen)
        stop = threading.Event()

        def push() -> None:
            while not stop.is_set():
                if propose.service_is_ready():
                    for target in range(pushed["iteration"], pushed["iteration"] + 3):  # the next ones
                        request = ProposeParameters.Request(run_id=RUN_ID, count=0, iteration=target)
                        propose.call_async(request)
                        sent["unsigned"] += 1
                        propose.call_async(wrong_key.sign(copy.deepcopy(request)))
                        sent["wrong_key"] += 1
                time.sleep(0.02)

        pusher = threading.Thread(target=push, daemon=True)
        pusher.start()
        try:
            output = finish(graph, seen)
        finally:
            stop.set()
            pusher.join(timeout=10)
    assert graph.returncode == 0, output
    assert sent["unsigned"] > 50 and sent["wrong_key"] > 50, sent
    assert re.search(r"adr_sampler\].*dropped a message on \S+: unsigned", output), output
    assert re.search(r"adr_sampler\].*dropped a message on \S+: bad_signature", output), output
    assert metric_rows(run_dir) == metric_rows(reference)
    assert sample_rows(run_dir) == sample_rows(reference)


# ---------------------------------------------------------------------------------------------------------------------
# Issue 61: the doors of a run that need no key. Each attack here stalled, slowed, killed or fooled a run before.


class Doors:
    """Attacks on every door of a running graph that a node without the key can reach (issue 61, item 1)."""

    def __init__(self, node, sent: dict[str, int]) -> None:  # noqa: ANN001
        from action_msgs.srv import CancelGoal
        from rcl_interfaces.srv import SetParameters
        from rclpy.action import ActionServer, GoalResponse
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from std_msgs.msg import Float64

        from adr_interfaces.msg import Metrics

        self.node, self.sent = node, sent
        self.spin_thread = InSpinThread(node)
        self.captured: list[RollOut.Goal] = []  # the trainer's goals for adr_sim_0, as a stranger's server sees them
        # a subscriber of the trajectories whose QoS never matches the instances' writers: they used to wait for it
        node.create_subscription(Trajectory, topics.TRAJECTORIES, lambda _msg: None, QoSProfile(
            depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL))

        def capture_and_reject(goal: RollOut.Goal) -> GoalResponse:
            self.captured.append(copy.deepcopy(goal))
            self.count("rogue_rejected")
            return GoalResponse.REJECT

        def accept(_goal: RollOut.Goal) -> GoalResponse:
            self.count("rogue_accepted")
            return GoalResponse.ACCEPT

        def fail_at_once(handle) -> RollOut.Result:  # noqa: ANN001 - unsigned feedback and result, "failed"
            handle.publish_feedback(RollOut.Feedback(stage=RollOut.Feedback.STAGE_FINISHED, success=False,
                                                     message="rogue"))
            handle.abort()
            return RollOut.Result(success=False, message="rogue server")

        # servers of this node under the instances' action names: one answers "rejected", one fails every goal
        self.rogues = [ActionServer(node, RollOut, topics.roll_out_action("adr_sim_0"), execute_callback=fail_at_once,
                                    goal_callback=capture_and_reject),
                       ActionServer(node, RollOut, topics.roll_out_action("adr_sim_1"), execute_callback=fail_at_once,
                                    goal_callback=accept)]
        self.replay_to = ActionClient(node, RollOut, topics.roll_out_action("adr_sim_1"))
        self.set_parameters = [node.create_client(SetParameters, f"/{name}/set_parameters") for name in
                               ("adr_trainer", "adr_sampler", "adr_discriminator", "adr_sim_0", "adr_sim_1",
                                "adr_viewer")]
        self.cancels = [node.create_client(CancelGoal, f"{topics.roll_out_action(f'adr_sim_{i}')}/_action/cancel_goal")
                        for i in range(2)]
        self.metrics = {name: node.create_publisher(Float64, f"adr/metrics/{name}", qos.METRICS)
                        for name in ("return_mean", "iteration")}
        self.signed_metrics = node.create_publisher(Metrics, topics.SIGNED_METRICS, qos.METRICS)
        self._float, self._metrics_type, self._cancel_type = Float64, Metrics, CancelGoal

    def count(self, name: str) -> None:
        self.sent[name] = self.sent.get(name, 0) + 1

    def storm(self, stop: threading.Event) -> None:
        from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
        from rcl_interfaces.srv import SetParameters

        use_sim_time = Parameter(name="use_sim_time", value=ParameterValue(type=ParameterType.PARAMETER_BOOL,
                                                                           bool_value=True))
        replayed = 0
        last_slow = 0.0
        while not stop.is_set():
            for client in self.cancels:  # ~400 cancel requests/s over both instances (zero id: cancel all goals)
                if client.service_is_ready():
                    client.call_async(self._cancel_type.Request())
                    self.count("cancel")
            now = time.monotonic()
            if now - last_slow > 0.5:
                last_slow = now
                for client in self.set_parameters:
                    if client.service_is_ready():
                        client.call_async(SetParameters.Request(parameters=[use_sim_time]))
                        self.count("set_use_sim_time")
                for name, value in (("return_mean", 123456.0), ("iteration", 999999.0)):
                    self.metrics[name].publish(self._float(data=value))
                    self.count("forged_metric")
                self.signed_metrics.publish(self._metrics_type(run_id=RUN_ID, names=["return_mean"],
                                                               values=[123456.0]))
                self.count("forged_signed_metric")
                while replayed < len(self.captured) and self.replay_to.server_is_ready():
                    # a goal signed for adr_sim_0, replayed to adr_sim_1
                    self.spin_thread.call(self.replay_to.send_goal_async, self.captured[replayed])
                    replayed += 1
                    self.count("goal_replayed_to_another_instance")
            time.sleep(0.005)


def viewer_state(output_lines: list[str]) -> dict:
    import urllib.request

    port = next(int(m.group(1)) for line in output_lines
                if (m := re.search(r"adr_viewer\].*serving http://127\.0\.0\.1:(\d+)/", line)))
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/state.json", timeout=10) as response:  # noqa: S310
        return json.loads(response.read())


def test_the_doors_that_need_no_key_are_closed(ros_env: dict[str, str], ros_domain_id: int, tmp_path: Path) -> None:
    """Issue 61, while a graph trains: use_sim_time=true set on every node (it stalled the trainer silently for
    127 s), ~400 cancel requests/s to both instances (exit 1 at iteration 4), a trajectory subscriber whose QoS never
    matches (the instances waited for it, exit 1 after 91 s), servers of a stranger under both instances' action
    names, one answering "rejected", one failing every goal unsigned (they were believed: the run took 2.8x as
    long), the trainer's goals for adr_sim_0 replayed to adr_sim_1 (accepted 5 times), and forged metrics for the
    viewer (123456, iteration 999999 showed on its page). The run equals the clean run to the bit; every attack is
    refused and said once; the page shows only the run's signed metrics."""
    budget = 2 * BUDGET
    reference = tmp_path / "in_process"
    run_in_process(reference, budget)
    run_dir = tmp_path / "graph"
    stop, sent = threading.Event(), {}
    with probe_node("hostile_doors", ros_domain_id) as node:
        doors = Doors(node, sent)
        graph = start_graph(run_dir, ros_env, budget, "instances:=2", "viewer:=true", "viewer_port:=0",
                            f"run_id:={RUN_ID}", f"service_timeout:={SLOW_MACHINE_S}")
        seen: list[str] = []
        read_until(graph, r"adr_trainer\]: adr on", 120, seen)
        attacking = threading.Thread(target=doors.storm, args=(stop,), daemon=True)
        attacking.start()
        try:
            read_until(graph, r"adr_trainer\]: iteration 2:", 3 * SLOW_MACHINE_S, seen)
            page = viewer_state(seen)
            output = finish(graph, seen, timeout=3 * SLOW_MACHINE_S)
        finally:
            stop.set()
            attacking.join(timeout=10)
    assert graph.returncode == 0, output
    assert metric_rows(run_dir) == metric_rows(reference)  # nothing stalled, slowed into a failure or steered it
    assert sample_rows(run_dir) == sample_rows(reference)
    assert sent.get("cancel", 0) > 100 and sent.get("set_use_sim_time", 0) >= 6 and sent.get("forged_metric", 0) > 4
    assert sent.get("rogue_rejected", 0) >= 1 and sent.get("goal_replayed_to_another_instance", 0) >= 1, sent
    for line in (r"adr_trainer\].*rejected \(set_parameters\): a request to set use_sim_time=True",
                 r"adr_sim_[01]\].*rejected \(cancel\)",
                 r"adr_sim_1\].*dropped a message on adr_sim_1/roll_out: bad_signature",  # adr_sim_0's goal
                 r"adr_viewer\].*dropped a message on Metrics: unsigned"):
        assert re.search(line, output), (line, output[-4000:])
    shown = page["metrics"]
    assert "iteration" not in shown and "return_mean" in shown, shown.keys()
    assert all(value != 123456.0 for series in shown.values() for value in series["v"]), shown["return_mean"]
    assert "Traceback" not in output


def test_nothing_of_an_earlier_start_is_taken_after_a_resume(ros_env: dict[str, str], ros_domain_id: int,
                                                               tmp_path: Path) -> None:
    """Issue 61: a run resumed with the same run_id:= took messages captured in its first start (10 old goals
    accepted by the instance, then exit 1 at iteration 5). Every launch is a new start of the run, which every
    signature covers: all that was captured in the first start (trajectories, rewards, sampler states, weights,
    proposals, the trainer's goals) is sent again into the resumed run and refused; it ends equal to an uninterrupted
    run."""
    budget = 3 * BUDGET  # the resumed part runs long enough for the replayer's writers to match its readers
    reference = tmp_path / "in_process"
    run_in_process(reference, budget)
    run_dir = tmp_path / "graph"
    captured: dict[str, list] = {}
    topics_of = {"trajectories": (Trajectory, topics.TRAJECTORIES, qos.RELIABLE_STREAM),
                 "rewards": (ParticleRewards, topics.PARTICLE_REWARDS, qos.RELIABLE_HISTORY),
                 "sampler_state": (SamplerState, topics.SAMPLER_STATE, qos.RELIABLE_HISTORY),
                 "weights": (PolicyWeights, topics.POLICY_WEIGHTS, qos.LATCHED),
                 "proposals": (ParameterSet, topics.PROPOSALS, qos.RELIABLE_HISTORY)}
    goals: list[RollOut.Goal] = []
    with probe_node("start_replayer", ros_domain_id) as node:
        from rclpy.action import ActionServer, GoalResponse

        for name, (kind, topic, profile) in topics_of.items():
            node.create_subscription(kind, topic, lambda msg, n=name: captured.setdefault(n, []).append(msg), profile)
        # a stranger's server under the instance's name sees the trainer's goals (and answers "rejected": ignored)
        ActionServer(node, RollOut, topics.roll_out_action("adr_sim_0"), execute_callback=lambda h: RollOut.Result(),
                     goal_callback=lambda goal: goals.append(copy.deepcopy(goal)) or GoalResponse.REJECT)
        first = start_graph(run_dir, ros_env, budget, "instances:=1", f"run_id:={RUN_ID}")
        seen: list[str] = []
        read_until(first, r"adr_trainer\]: iteration 2:", 3 * SLOW_MACHINE_S, seen)
        first.send_signal(signal.SIGINT)
        output = finish(first, seen, timeout=120)
        assert first.returncode == 0, output
        iteration = json.loads((run_dir / "checkpoints" / "latest.json").read_text())["iteration"]
        assert goals and all(captured.get(name) for name in topics_of), (len(goals), list(captured))

        publishers = {name: node.create_publisher(kind, topic, profile)
                      for name, (kind, topic, profile) in topics_of.items()}
        client = ActionClient(node, RollOut, topics.roll_out_action("adr_sim_0"))
        spin_thread = InSpinThread(node)
        first_start = {name: list(messages) for name, messages in captured.items()}
        first_goals = list(goals)
        second = start_graph(run_dir, ros_env, budget, "instances:=1", "resume:=true", f"run_id:={RUN_ID}")
        stop = threading.Event()

        def replay() -> None:
            """Everything captured, again and again while the resumed run goes (its readers match at their pace)."""
            while not stop.is_set():
                for name, messages in first_start.items():
                    for msg in messages:
                        publishers[name].publish(msg)
                if serves(node, "adr_sim_0", f"{topics.roll_out_action('adr_sim_0')}/_action/send_goal"):
                    for goal in first_goals:
                        spin_thread.call(client.send_goal_async, goal)
                stop.wait(1.0)

        replaying = threading.Thread(target=replay, daemon=True)
        replaying.start()
        try:
            output = finish(second, [], timeout=3 * SLOW_MACHINE_S)
        finally:
            stop.set()
            replaying.join(timeout=30)
    assert second.returncode == 0, output
    assert f"resumed after iteration {iteration}" in output
    assert metric_rows(run_dir) == metric_rows(reference)
    assert sample_rows(run_dir) == sample_rows(reference)
    for line in (r"adr_sim_0\].*dropped a message on adr_sim_0/roll_out: bad_signature",
                 r"adr_(trainer|discriminator)\].*dropped a message on adr/trajectories: bad_signature"):
        assert re.search(line, output), (line, output[-4000:])
    assert len((run_dir / "run.starts").read_text().split()) == 2  # two starts of one run


def serves(node, name: str, service: str) -> bool:  # noqa: ANN001
    try:
        return any(found.endswith(service) for found, _ in node.get_service_names_and_types_by_node(name, "/"))
    except Exception:  # noqa: BLE001 - not discovered yet
        return False


def test_a_key_planted_by_another_user_is_refused(ros_env: dict[str, str], tmp_path: Path) -> None:
    """Issue 61: a run.key of another user (mode 0600, owned by nobody) in a run dir was trusted by the launcher, and
    rewards signed with it steered the run. Now the launch refuses it in one line and starts nothing."""
    from adr_ros.signing import create_key_file

    if os.geteuid() != 0:
        import pytest

        pytest.skip("making a file of another user needs root (the unit test covers the rule: tests/ros)")
    run_dir = tmp_path / "graph"
    key = create_key_file(run_dir / "run.key")
    os.chown(key, 65534, 65534)  # nobody
    graph = start_graph(run_dir, ros_env, BUDGET, "instances:=1")
    output = finish(graph, [], timeout=120)
    assert graph.returncode == 2, output
    assert re.search(r"adr_launch: key file .*run\.key belongs to another user", output), output
    assert "started adr_" not in output
