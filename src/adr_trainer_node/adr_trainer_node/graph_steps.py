"""The steps of Algorithm 1 over the node graph: ``adr_core.engine.steps.Steps`` in ROS 2.

    propose(k)      ProposeParameters service of the sampler (asked again while it waits for the rewards of k-1)
    roll_out(k)     RollOut goals on the simulator instances (dispatcher.py), trajectories taken from the topic
                    (inbox.py: each one checked before it counts); AcceptedTrajectories names what counts
    publish_weights PolicyWeights (latched)
    feedback(k, ..) ParticleRewards of the discriminator (boundary ADR: the task scores of the rollouts, which this
                    node sends) and the sampler's SamplerState of k, each checked before it is kept
    save_components the sampler's and discriminator's SaveCheckpoint services

Every wait checks the stop request and raises ``StopRequested`` (Ctrl-C ends a wait at once, not while a checkpoint
is being written). The run's loop and learning step are ``adr_core.engine.loop.Engine`` (as
``adr_core.engine.remote.remote_engine`` sets it up); the node (node.py) wires the two together.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from adr_core import plausibility
from adr_core.agents import OffPolicyAgent
from adr_core.base.checkpoint import CheckpointError
from adr_core.engine.steps import StopRequested
from adr_core.iteration import (
    DISCRIMINATOR_COLUMNS,
    Feedback,
    Proposals,
    Rollouts,
    outcome_scores,
    sampler_columns,
)
from adr_core.randomization import RandomizationSpace
from adr_core.rollout import KIND_CODES, Trajectory, trajectory_digest
from adr_core.run_spec import RunSpec
from adr_core.training.config import TrainConfig
from adr_interfaces.msg import AcceptedTrajectories, ParameterSet, ParticleRewards, PolicyWeights, SamplerState
from adr_interfaces.msg import Trajectory as TrajectoryMsg
from adr_interfaces.srv import ProposeParameters, SaveCheckpoint
from adr_ros import policy_weights, qos, run_ids, topics
from adr_ros.arrays import from_field, to_field
from adr_ros.checkpoints import component_file
from adr_ros.diagnostics import NodeDiagnostics
from adr_ros.metrics import PREFIX as METRICS_PREFIX
from adr_ros.receipts import ReceiptSender, is_probe
from adr_ros.signing import RunSigning, node_path
from adr_ros.verified_clients import take_only_verified
from adr_trainer_node.dispatcher import RolloutDispatcher
from adr_trainer_node.inbox import Expected, TrajectoryInbox

PROPOSE_ATTEMPT_S = 5.0  # a propose call without an answer after this long is asked again (answers can be lost)


@dataclass(frozen=True)
class SignedProposals(Proposals):
    """The sampler's proposals with the messages it signed, which ``roll_out`` dispatches as they came (each
    simulator instance checks the sampler's signature)."""

    messages: tuple[ParameterSet, ...]


class GraphSteps:
    """Proposals, rollouts, weights and feedback of each iteration through the graph's services, actions and
    topics. ``position`` tells the iteration in progress and the last completed one (statistics of other iterations
    are refused or dropped)."""

    def __init__(self, node: Node, spec: RunSpec, config: TrainConfig, space: RandomizationSpace,
                 agent: OffPolicyAgent, *, mode: str, instances: list[str], rollout_timeout: float,
                 service_timeout: float, wait_for_recorder: str, stop_requested: threading.Event,
                 diagnostics: NodeDiagnostics, position: Callable[[], tuple[int, int | None]],
                 signing: RunSigning, first_iteration: int = 0) -> None:
        self.signing = signing  # everything sent is signed, everything received checked first (adr_ros.signing)
        self.node, self.config, self.space, self.agent = node, config, space, agent
        self.mode, self.instances, self.service_timeout = mode, instances, service_timeout
        self.wait_for_recorder, self.stop_requested = wait_for_recorder, stop_requested
        self.diagnostics, self.position = diagnostics, position
        self.run_id, self.slots = spec.run_id, spec.slots
        self.path = config.sampler_record.feedback  # samplers.feedback_path: what the sampler learns from
        self.learns_from_rewards = self.path == "discriminator"
        self.learns_from_outcomes = self.path == "outcomes"  # boundary ADR: this node sends the task scores
        self.reward_limit = config.sampler_record.reward_limit  # what the sampler refuses, refused here first
        obs_dim, act_dim = spec.obs_dim, spec.act_dim
        group = ReentrantCallbackGroup()
        # reference trajectories too (ADR): their returns go into metrics.csv as adr-train's do
        self.inbox = TrajectoryInbox(obs_dim, act_dim, kinds=("randomized", "reference") if self.learns_from_rewards
                                     else ("randomized",), run_id=self.run_id,
                                     reward_bound=plausibility.reward_bound(config.env_id,
                                                                            config.reward_bound_per_step))
        self.inbox.reopen_from(first_iteration)
        self.rewards: dict[int, np.ndarray] = {}
        self.discriminator_metrics: dict[int, dict[str, float]] = {}
        self.sampler_metrics: dict[int, dict[str, float]] = {}
        self.weights_pub = node.create_publisher(PolicyWeights, topics.POLICY_WEIGHTS, qos.LATCHED)
        self.accepted_pub = node.create_publisher(AcceptedTrajectories, topics.ACCEPTED_TRAJECTORIES,
                                                  qos.RELIABLE_HISTORY)
        node.create_subscription(TrajectoryMsg, topics.TRAJECTORIES, self.on_trajectory, qos.CRITICAL_STREAM,
                                 callback_group=group)
        self.rewards_sub = node.create_subscription(ParticleRewards, topics.PARTICLE_REWARDS, self.on_rewards,
                                                    qos.CRITICAL_HISTORY, callback_group=group)
        # boundary ADR: the task scores of each iteration's slots go to the sampler as its "rewards"
        self.outcomes_pub = (node.create_publisher(ParticleRewards, topics.PARTICLE_REWARDS, qos.RELIABLE_HISTORY)
                             if self.learns_from_outcomes else None)
        # KEEP_ALL (qos.py): a burst from another publisher on the topic cannot displace the sampler's state of an
        # iteration before this node has taken it (a fuzz storm did, with the publisher's depth of 1)
        node.create_subscription(SamplerState, topics.SAMPLER_STATE, self.on_sampler_state, qos.CRITICAL_HISTORY,
                                 callback_group=group)
        self.propose_client = node.create_client(ProposeParameters, topics.PROPOSE_SERVICE, callback_group=group,
                                                 qos_profile=qos.CRITICAL_SERVICE)
        self.save_clients = {"sampler": node.create_client(SaveCheckpoint, topics.SAMPLER_SAVE_CHECKPOINT,
                                                           callback_group=group, qos_profile=qos.CRITICAL_SERVICE)}
        if self.learns_from_rewards:
            self.save_clients["discriminator"] = node.create_client(
                SaveCheckpoint, topics.DISCRIMINATOR_SAVE_CHECKPOINT, callback_group=group,
                qos_profile=qos.CRITICAL_SERVICE)
        # a request is signed for its server; only an answer signed by it for this node ends a call (a stranger's
        # server under the same name, answering first, neither blocks nor replaces it: verified_clients.py)
        namespace = node.get_namespace()
        self._servers = {self.propose_client.srv_name: node_path(namespace, topics.SAMPLER_NODE),
                         self.save_clients["sampler"].srv_name: node_path(namespace, topics.SAMPLER_NODE)}
        if "discriminator" in self.save_clients:
            self._servers[self.save_clients["discriminator"].srv_name] = node_path(namespace,
                                                                                topics.DISCRIMINATOR_NODE)
        for client in (self.propose_client, *self.save_clients.values()):
            take_only_verified(client, partial(self._signed_for_me, client.srv_name))
        self.receipts = ReceiptSender(node, signing, self.run_id)  # answers the instances' probes
        self.dispatcher = RolloutDispatcher(node, instances, rollout_timeout, signing=signing)

    @property
    def sampler_learns(self) -> bool:
        return self.path != "none"

    # ------------------------------------------------------------------ subscriptions
    def on_trajectory(self, msg: TrajectoryMsg) -> None:
        if not self.signing.accept(msg, topics.TRAJECTORIES):  # before it can count toward a copy cap
            return
        if is_probe(msg):  # an instance asks whether its trajectories reach this node: they do
            self.receipts.answer(msg)
            return
        refusal = self.inbox.offer(msg, received_ns=time.time_ns())
        if refusal is None:
            self.diagnostics.count("trajectories_accepted")
        elif not refusal.startswith("ignored"):
            reason = refusal.split(":", 1)[0]
            self.diagnostics.reject(reason, f"trajectory from {msg.instance_id or '?'}: {refusal}")

    def _stale(self, iteration: int) -> bool:
        """Statistics of an iteration this trainer already logged (a publisher's history replayed to a late match,
        or a forgery): counted and dropped, so nothing keyed by finished iterations accumulates."""
        last_completed = self.position()[1]
        if last_completed is not None and iteration <= last_completed:
            self.diagnostics.count("stale_statistics")
            return True
        return False

    def on_rewards(self, msg: ParticleRewards) -> None:
        if not self.signing.accept(msg, topics.PARTICLE_REWARDS):
            return
        if self.learns_from_outcomes:  # boundary ADR: this node computes the scores it sends; none come in
            return
        if self._stale(int(msg.iteration)):
            return
        values = from_field(msg.metric_values, np.float64)
        rewards = from_field(msg.rewards, np.float64)
        refusal = self._statistics_refusal(msg.run_id, int(msg.iteration), msg.metric_names, values,
                                           DISCRIMINATOR_COLUMNS)
        if refusal is None and (rewards.size != self.slots or not np.all(np.isfinite(rewards))):
            refusal = f"{rewards.size} rewards (finite: {bool(np.all(np.isfinite(rewards)))}) for {self.slots} slots"
        if refusal is None and self.reward_limit is not None and np.abs(rewards).max() > self.reward_limit:
            refusal = f"rewards up to {np.abs(rewards).max():.3g} in size (a discriminator reward is within " \
                      f"+-{self.reward_limit:g})"
        if refusal is not None:
            self.diagnostics.reject("rewards", f"particle rewards of iteration {msg.iteration}: {refusal}")
            return
        self.discriminator_metrics[int(msg.iteration)] = dict(zip(msg.metric_names, map(float, values)))
        self.rewards[int(msg.iteration)] = rewards.copy()

    def on_sampler_state(self, msg: SamplerState) -> None:
        if not self.signing.accept(msg, topics.SAMPLER_STATE):
            return
        if self._stale(int(msg.iteration)):
            return
        values = from_field(msg.metric_values, np.float64)
        refusal = self._statistics_refusal(msg.run_id, int(msg.iteration), msg.metric_names, values,
                                           sampler_columns())
        if refusal is not None:
            self.diagnostics.reject("sampler_state", f"sampler state of iteration {msg.iteration}: {refusal}")
            return
        self.sampler_metrics[int(msg.iteration)] = dict(zip(msg.metric_names, map(float, values)))

    def _statistics_refusal(self, run_id: str, iteration: int, names: list[str], values: np.ndarray,
                            columns: tuple[str, ...]) -> str | None:
        """Why a statistics message cannot be this run's (None: it can). Only the iteration in progress and
        earlier ones are kept, so no sender can grow these tables beyond the iterations in flight; only the
        producer's own ``columns`` are accepted, so no message can rename or overwrite another field."""
        if run_id != self.run_id:
            return f"run {run_id!r}, this is run {self.run_id!r}"
        in_progress = self.position()[0]
        if iteration > in_progress:
            return f"iteration {iteration} is ahead of the one in progress ({in_progress})"
        if len(names) != values.size or not np.all(np.isfinite(values)):
            return f"{len(names)} metric names for {values.size} values, or non-finite values"
        if values.size and np.abs(values).max() > plausibility.STATISTIC_LIMIT:
            return f"a value of {np.abs(values).max():.3g} (statistics are within +-{plausibility.STATISTIC_LIMIT:g})"
        foreign = sorted(set(names) - set(columns)) if len(names) <= len(columns) else names[:3]
        if foreign or len(set(names)) != len(names):
            return f"metric names {foreign[:3]} are not this producer's columns ({', '.join(columns)}), or repeat"
        return None

    # ------------------------------------------------------------------ the steps
    def propose(self, k: int) -> Proposals:
        """The sampler's proposals for iteration k (asks again while it waits for the rewards of k-1, and when an
        answer does not come within PROPOSE_ATTEMPT_S: the sampler answers a repeated question with the same
        settings, so a lost answer costs seconds, not the run)."""
        deadline = time.monotonic() + self.service_timeout
        reason = "no answer"
        while True:
            self.check_stop()
            attempt_deadline = min(deadline, time.monotonic() + PROPOSE_ATTEMPT_S)
            response = self.call(self.propose_client,
                                 ProposeParameters.Request(run_id=self.run_id, count=0, iteration=k),
                                 attempt_deadline, stoppable=True)
            foreign = None if response is None or not response.success else next(
                (r for p in response.proposals if (r := run_ids.foreign(p.run_id, self.run_id, "proposals"))), None)
            if foreign is not None:  # another run's sampler answered (same DDS domain): ask again
                self.diagnostics.reject("run_id", foreign)
                response.success, response.message = False, foreign
            if response is not None and response.success:
                messages = list(response.proposals)
                if messages[0].iteration != k or len(messages) != self.slots:
                    raise RuntimeError(f"the sampler proposed iteration {messages[0].iteration} with "
                                       f"{len(messages)} settings; the trainer expects iteration {k} with {self.slots}"
                                       f" (restart the sampler with resume:=true, or start a fresh run)")
                return SignedProposals(np.stack([from_field(p.normalized, np.float64) for p in messages]),
                                       np.stack([from_field(p.values, np.float64) for p in messages]),
                                       tuple(messages))  # roll_out(k) dispatches these
            if response is not None:
                reason = response.message  # the sampler's last word, e.g. which rewards it still waits for
            if time.monotonic() > deadline:
                raise RuntimeError(f"the sampler did not propose iteration {k} within {self.service_timeout:.0f} s: "
                                   f"{reason}")
            time.sleep(0.01)

    def roll_out(self, k: int, proposals: Proposals, min_version: int) -> Rollouts:
        """Roll out every slot of iteration k (``proposals``: what ``propose`` returned); returns the randomized
        trajectories in slot order and, for ADR, the reference ones."""
        def slots_done() -> set[int]:
            return set(range(self.slots)) - set(self.inbox.missing(k, self.slots))

        assert isinstance(proposals, SignedProposals), "roll_out takes what this executor's propose returned"
        self.inbox.expect(Expected(k, proposals.physical, np.asarray(self.space.reference(), np.float64),
                                   min_version))
        self.dispatcher.start(list(proposals.messages), with_reference=self.learns_from_rewards,
                              min_policy_version=min_version,
                              newest_policy_version=lambda: self.inbox.published_version, slots_done=slots_done)
        while not self.dispatcher.finished.wait(0.05):
            self.check_stop()
        if self.dispatcher.error is not None:
            raise RuntimeError(f"iteration {k}: {self.dispatcher.error}")
        if self.dispatcher.report.reassigned:
            self.diagnostics.count("rollouts_reassigned", self.dispatcher.report.reassigned)
        if not self.learns_from_rewards:
            randomized = self.inbox.take(k, self.slots)
            if self.learns_from_outcomes:
                self.publish_outcomes(k, randomized)
            return Rollouts(randomized)
        # ADR: each goal published its reference trajectory before it succeeded; wait for their delivery (metrics)
        deadline = time.monotonic() + 10.0
        while self.inbox.missing(k, self.slots, "reference") and time.monotonic() < deadline:
            self.check_stop()
            self.inbox.wait(0.01)
        if self.inbox.missing(k, self.slots, "reference"):
            learns = " and from the agent's replay (learn_from_reference)" if self.config.learn_from_reference else ""
            self.node.get_logger().warning(f"iteration {k}: reference trajectories missing from metrics.csv{learns}")
            randomized = self.inbox.take(k, self.slots)
            self.publish_acceptance(k, randomized)  # the discriminator fills the reference slots from its own
            return Rollouts(randomized)
        taken = self.inbox.take_kinds(k, self.slots, ("randomized", "reference"))
        self.publish_acceptance(k, [*taken["randomized"], *taken["reference"]])
        return Rollouts(taken["randomized"], taken["reference"])

    def publish_outcomes(self, k: int, randomized: list[Trajectory]) -> None:
        """Boundary ADR: each slot's task score (``outcome_scores``: solved 1, else 0) to the sampler, on the topic the
        discriminator's rewards use for ADR (``feedback`` takes the same scores of the same rollouts)."""
        assert self.outcomes_pub is not None
        scores = outcome_scores(randomized)
        msg = ParticleRewards(run_id=self.run_id, iteration=k)
        msg.header.stamp = self.node.get_clock().now().to_msg()
        msg.slots = to_field(np.arange(self.slots), np.uint32)
        msg.rewards = to_field(scores, np.float64)
        self.outcomes_pub.publish(self.signing.sign(msg))

    def publish_acceptance(self, k: int, accepted: list[Trajectory]) -> None:
        """Which trajectory counts for each slot of iteration k, by digest: the discriminator scores exactly these
        (one acceptance rule for the graph: what the trainer refused, no node keeps)."""
        msg = AcceptedTrajectories(run_id=self.run_id, iteration=k, kinds=[KIND_CODES[t.kind] for t in accepted],
                                   slots=[t.slot for t in accepted], digests=[trajectory_digest(t) for t in accepted])
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self.accepted_pub.publish(self.signing.sign(msg))

    def publish_weights(self) -> None:
        msg = policy_weights.to_msg(self.agent.actor_state_dict(), version=self.agent.policy_version,
                                    algorithm=self.config.agent.algorithm, obs_dim=self.agent.obs_dim,
                                    act_dim=self.agent.act_dim, run_id=self.run_id)
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self.inbox.note_published(self.agent.policy_version)
        self.weights_pub.publish(self.signing.sign(msg))

    def feedback(self, k: int, rollouts: Rollouts) -> Feedback:
        """What came back on the graph's topics about iteration k (boundary ADR: the task scores of its rollouts,
        which roll_out sent), and the graph's own timing column: the iteration's summed publish -> receive time of
        its trajectories."""
        rewards = outcome_scores(rollouts.randomized) if self.learns_from_outcomes else self.rewards_of(k)
        return Feedback(rewards, self.sampler_metrics_of(k), self.discriminator_metrics.pop(k, {}),
                        {"time_transport_s": self.inbox.transport_seconds(k)})

    def rewards_of(self, k: int) -> np.ndarray | None:
        if not self.sampler_learns:
            return None
        # sync: the row waits for them (a loaded machine may take seconds); the discriminator and the sampler are
        # required nodes, so a dead one stops the graph rather than this wait
        deadline = time.monotonic() + (self.service_timeout if self.mode in ("sync", "probe") else 0.0)
        while k not in self.rewards and time.monotonic() < deadline and not self.stop_requested.is_set():
            time.sleep(0.005)
        for old in [i for i in self.rewards if i < k]:
            del self.rewards[old]
        return self.rewards.get(k)

    def sampler_metrics_of(self, k: int) -> dict[str, float] | None:
        """The sampler's update statistics of iteration k (it publishes them once the rewards of k arrived); None:
        they did not come (in time)."""
        if not self.sampler_learns:
            return {}
        deadline = time.monotonic() + (self.service_timeout if self.mode in ("sync", "probe") else 0.0)
        while k not in self.sampler_metrics and time.monotonic() < deadline and not self.stop_requested.is_set():
            time.sleep(0.005)
        for old in [i for i in self.sampler_metrics if i < k]:
            del self.sampler_metrics[old]
        return self.sampler_metrics.pop(k, None)

    # ------------------------------------------------------------------ the graph's start and its checkpoint
    def wait_for_graph(self) -> None:
        deadline = time.monotonic() + self.service_timeout
        # ADR: the discriminator must be up before iteration 0 (its rewards are kept for late matches, transient-local
        # depth 256, so a subscription that matches late still gets them)
        def discriminator_ready() -> bool:
            return not self.learns_from_rewards or self.rewards_sub.get_publisher_count() >= 1

        while (not self.dispatcher.ready_instances() or not self.propose_client.service_is_ready()
               or not discriminator_ready()):
            self.check_stop()
            if time.monotonic() > deadline:
                raise RuntimeError(f"no sampler, discriminator or simulator instance ({', '.join(self.instances)}) "
                                   f"appeared within {self.service_timeout:.0f} s")
            time.sleep(0.05)
        self._wait_for_every_instance(min(self.INSTANCE_GRACE_S, max(0.0, deadline - time.monotonic())))
        if self.wait_for_recorder:
            self._wait_for_recorder(self.wait_for_recorder)

    INSTANCE_GRACE_S = 10.0

    def _wait_for_every_instance(self, grace: float) -> None:
        """Once one instance is up, give the others ``grace`` seconds to be discovered (instances on other hosts
        appear later), so the first iterations' slots spread over every listed instance; one still missing then is
        named and the run starts without it (it takes slots once it appears)."""
        deadline = time.monotonic() + grace
        while len(self.dispatcher.ready_instances()) < len(self.instances) and time.monotonic() < deadline:
            self.check_stop()
            time.sleep(0.05)
        missing = sorted(set(self.instances) - set(self.dispatcher.ready_instances()))
        if missing:
            self.node.get_logger().warning(f"starting without {', '.join(missing)} (not discovered within "
                                           f"{grace:.0f} s of the first instance); it takes slots once it appears")

    def _wait_for_recorder(self, name: str, timeout: float = 15.0) -> None:
        """Until the recorder has subscribed to the graph's own topics (at its start) and to this node's metric
        topics (it finds those by discovery, once a second: a short run published its first metrics before and the
        bag missed them); a recorder that failed (e.g. its bag folder exists) costs this wait, then the run goes on
        without it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_stop()
            if self._recorder_subscribed(name):
                return
            time.sleep(0.05)
        self.node.get_logger().warning(f"{name} did not subscribe within {timeout:.0f} s: the bag may miss the "
                                       "run's start")

    def _recorder_subscribed(self, name: str) -> bool:
        graph = self.node
        try:
            if not any(node == name and graph.get_subscriber_names_and_types_by_node(node, namespace)
                       for node, namespace in graph.get_node_names_and_namespaces()):
                return False
            metrics = [topic for topic, _ in graph.get_publisher_names_and_types_by_node(graph.get_name(),
                                                                                      graph.get_namespace())
                       if METRICS_PREFIX in topic]
            return all(any(info.node_name == name for info in graph.get_subscriptions_info_by_topic(topic))
                       for topic in metrics)
        except Exception:  # noqa: BLE001 - it left the graph between the calls
            return False

    def save_components(self, k: int, directory: Path, patient: bool) -> dict[str, str]:
        """The sampler's and the discriminator's files of iteration k in ``directory``."""
        return {component: self._component_checkpoint(component, client, k, directory, patient)
                for component, client in self.save_clients.items()}

    def _component_checkpoint(self, component: str, client: Any, k: int, directory: Path, patient: bool) -> str:
        deadline = time.monotonic() + (self.service_timeout if patient else 5.0)
        name = component_file(component, k)
        reason = "no answer"
        while time.monotonic() < deadline:
            if patient and self.stop_requested.is_set():  # Ctrl-C: a hung node gets 5 s more, not the full timeout
                deadline, patient = min(deadline, time.monotonic() + 5.0), False
            if client.service_is_ready():
                response = self.call(client, SaveCheckpoint.Request(run_id=self.run_id, iteration=k,
                                                                    directory=str(directory)),
                                     min(deadline, time.monotonic() + 5.0))
                if response is not None and response.success:
                    return Path(response.path).name
                if response is not None:
                    reason = response.message
                    if reason.startswith("cannot write checkpoint"):  # it will not get better by asking again
                        break
            if (directory / name).is_file():  # written by the node itself on shutdown
                return name
            time.sleep(0.05)
        if (directory / name).is_file():
            return name
        raise CheckpointError(f"the {component} did not save its state of iteration {k}: {reason}")

    # ------------------------------------------------------------------ helpers
    def _signed_for_me(self, service: str, response: Any) -> bool:
        return self.signing.accept(response, service, to_me=True)

    def call(self, client: Any, request: Any, deadline: float, stoppable: bool = False) -> Any:
        """The service's answer, or None by ``deadline``. ``stoppable``: Ctrl-C ends the wait at once (not while
        a checkpoint is being saved)."""
        if not client.wait_for_service(timeout_sec=max(0.0, min(1.0, deadline - time.monotonic()))):
            return None
        future = client.call_async(self.signing.sign(request, to=self._servers[client.srv_name]))
        while not future.done() and time.monotonic() < deadline:
            self.check_stop(allow_during_checkpoint=not stoppable)
            time.sleep(0.002)
        if not future.done():
            return None
        # only an answer signed by the run's server for this node resolves the call (take_only_verified, above)
        return future.result()

    def check_stop(self, allow_during_checkpoint: bool = False) -> None:
        if self.stop_requested.is_set() and not allow_during_checkpoint:
            raise StopRequested
