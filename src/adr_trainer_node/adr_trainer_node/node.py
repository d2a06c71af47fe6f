"""Trainer node: the agent learner, and the loop that drives the graph through Algorithm 1.

One iteration k (docs/node_graph.md)::

    proposals   = sampler.propose_parameters()                   # service; retried while the sampler awaits rewards
    trajectories = roll out every slot on the simulator instances  # RollOut goals, re-assigned on failure/timeout
    agent.store(randomized trajectories in slot order); agent.update(agent.updates_due())
    publish the new weights (version = gradient steps so far)

The discriminator and sampler react to the trajectories and rewards on their own topics. In ``async`` mode the
update of iteration k runs while iteration k+1 is rolled out with the latest published weights.
"""
from __future__ import annotations

import math
import sys
import threading
import time
from pathlib import Path

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticStatus
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from adr_core import plausibility
from adr_core.agents import make_agent
from adr_core.base.checkpoint import CheckpointError, CheckpointSchedule
from adr_core.base.seeding import component_seed
from adr_core.evaluation.early_stop import EarlyStop
from adr_core.iteration import DISCRIMINATOR_COLUMNS, SAMPLER_COLUMNS, IterationResult, outcome_scores, update_agent
from adr_core.probe.policies import load_frozen_policy
from adr_core.rollout import KIND_CODES, Trajectory, trajectory_digest
from adr_core.samplers.svpg import REWARD_LIMIT
from adr_core.training.config import ConfigError
from adr_core.training.driver import Hook, finish_iteration
from adr_core.training.hooks import EarlyStopHook, EvaluationHook, RunLogHook, open_run_log
from adr_core.training.run_log import RunLog
from adr_core.training.trainer import METRIC_COLUMNS, early_stop, periodic_evaluation, resolve_device
from adr_interfaces.msg import AcceptedTrajectories, ParameterSet, ParticleRewards, PolicyWeights, SamplerState
from adr_interfaces.msg import Trajectory as TrajectoryMsg
from adr_interfaces.srv import ProposeParameters, SaveCheckpoint
from adr_ros import policy_weights, qos, run_ids, topics
from adr_ros.arrays import from_field, to_field
from adr_ros.checkpoints import checkpoint_dir, component_file, write_manifest
from adr_ros.diagnostics import NodeDiagnostics
from adr_ros.lifecycle import init_without_signal_handlers, stop_on_signals
from adr_ros.metrics import MetricPublisher
from adr_ros.run_config import declare_run
from adr_trainer_node.agent_checkpoint import load_agent, save_agent
from adr_trainer_node.dispatcher import RolloutDispatcher
from adr_trainer_node.inbox import Expected, TrajectoryInbox
from adr_trainer_node.probe_loop import run_probe

PROPOSE_ATTEMPT_S = 5.0  # a propose call without an answer after this long is asked again (answers can be lost)
METRICS = ("return_mean", "reference_return_mean", "solved_fraction", "critic_loss", "actor_loss", "entropy_alpha",
           "policy_entropy", "updates_per_s", "agent_steps", "iteration_s")


class StopRequested(Exception):
    """Ctrl-C (or the budget) ended the run between two steps."""


class TrainerNode(Node):
    def __init__(self, stop_requested: threading.Event | None = None) -> None:
        super().__init__("adr_trainer")
        self.config, self.run_dir, spec = declare_run(self, default_torch_threads=0)
        self.run_id = spec.run_id
        cfg = self.config
        self.mode = self.declare_parameter("mode", "sync", ParameterDescriptor(
            description="sync: each iteration waits for its rollouts (Algorithm 1); async: roll out iteration k+1 "
                        "with the latest weights while learning from iteration k", read_only=True)).value
        if self.mode not in ("sync", "async", "probe"):
            raise ConfigError(f"mode must be 'sync', 'async' or 'probe', got {self.mode!r}")
        frozen_spec = self.declare_parameter("frozen_policy", "", ParameterDescriptor(
            description="mode probe: the frozen policy (checkpoint or module:callable)", read_only=True)).value
        self.probe_iterations = self.declare_parameter("probe_iterations", 200, ParameterDescriptor(
            description="mode probe: ADR iterations", read_only=True)).value
        self.instances = list(self.declare_parameter("sim_instances", ["adr_sim_0"], ParameterDescriptor(
            description="Node names of the simulator instances", read_only=True)).value)
        self.rollout_timeout = self.declare_parameter("rollout_timeout", 120.0, ParameterDescriptor(
            description="Seconds before an unfinished rollout is given to another instance",
            floating_point_range=[FloatingPointRange(from_value=1.0, to_value=3600.0)], read_only=True)).value
        self.wait_for_recorder = self.declare_parameter("wait_for_recorder", "", ParameterDescriptor(
            description="Node name of a recorder to wait for (up to 15 s) before iteration 0, so that the bag holds "
                        "the run from its start; empty: none (record:=true sets it)", read_only=True)).value
        self.service_timeout = self.declare_parameter("service_timeout", 60.0, ParameterDescriptor(
            description="Seconds to wait for the sampler / discriminator before giving up",
            floating_point_range=[FloatingPointRange(from_value=1.0, to_value=3600.0)], read_only=True)).value
        resume = self.declare_parameter("resume", False, ParameterDescriptor(
            description="Continue from <run_dir>/checkpoints/latest.json", read_only=True)).value

        self.space = spec.randomization_space()
        obs_dim, act_dim = spec.obs_dim, spec.act_dim
        self.agent = make_agent(cfg.agent, obs_dim, act_dim, component_seed(cfg.seed, "agent"),
                                resolve_device(cfg.device))
        self.frozen = None
        if self.mode == "probe":
            if not frozen_spec:
                raise ConfigError("mode probe needs the frozen_policy parameter")
            self.frozen = load_frozen_policy(frozen_spec, cfg.env_id, self.space)
        self.slots, self.learns_from_rewards = spec.slots, spec.learns_from_rewards
        self.learns_from_outcomes = spec.learns_from_outcomes  # boundary ADR: this node sends the task scores
        self.sampler_learns = self.learns_from_rewards or self.learns_from_outcomes
        self.iteration, self.wall_time = 0, 0.0
        self.last_learning_s = 0.0  # the last agent update block, for the Ctrl-C message
        if resume:
            payload = load_agent(self.run_dir, self.agent, cfg, self.space)
            self.iteration, self.wall_time = int(payload["iteration"]) + 1, float(payload["wall_time"])
            self.get_logger().info(f"resumed after iteration {payload['iteration']} "
                                   f"({self.agent.transitions_seen} agent steps)")

        group = ReentrantCallbackGroup()
        # reference trajectories too (ADR): their returns go into metrics.csv as adr-train's do
        self.inbox = TrajectoryInbox(obs_dim, act_dim, kinds=("randomized", "reference") if self.learns_from_rewards
                                     else ("randomized",), run_id=self.run_id,
                                     reward_bound=plausibility.reward_bound(cfg.env_id, cfg.reward_bound_per_step))
        self.inbox.reopen_from(self.iteration)
        self.rewards: dict[int, np.ndarray] = {}
        self.discriminator_metrics: dict[int, dict[str, float]] = {}
        self.references: dict[int, list[Trajectory]] = {}  # ADR: the reference trajectories, for metrics.csv
        self.sampler_metrics: dict[int, dict[str, float]] = {}
        self.weights_pub = self.create_publisher(PolicyWeights, topics.POLICY_WEIGHTS, qos.LATCHED)
        self.accepted_pub = self.create_publisher(AcceptedTrajectories, topics.ACCEPTED_TRAJECTORIES,
                                                  qos.RELIABLE_HISTORY)
        self.create_subscription(TrajectoryMsg, topics.TRAJECTORIES, self.on_trajectory, qos.RELIABLE_STREAM,
                                 callback_group=group)
        self.rewards_sub = self.create_subscription(ParticleRewards, topics.PARTICLE_REWARDS, self.on_rewards,
                                                    qos.RELIABLE_HISTORY, callback_group=group)
        # boundary ADR: the task scores of each iteration's slots go to the sampler as its "rewards"
        self.outcomes_pub = (self.create_publisher(ParticleRewards, topics.PARTICLE_REWARDS, qos.RELIABLE_HISTORY)
                             if self.learns_from_outcomes else None)
        # a reader history deeper than the publisher's 1: a burst from another publisher on the topic cannot
        # displace the sampler's state of an iteration before this node has taken it (a fuzz storm did)
        self.create_subscription(SamplerState, topics.SAMPLER_STATE, self.on_sampler_state, qos.RELIABLE_HISTORY,
                                 callback_group=group)
        self.propose_client = self.create_client(ProposeParameters, topics.PROPOSE_SERVICE, callback_group=group)
        self.save_clients = {"sampler": self.create_client(SaveCheckpoint, topics.SAMPLER_SAVE_CHECKPOINT,
                                                           callback_group=group)}
        if self.learns_from_rewards:
            self.save_clients["discriminator"] = self.create_client(
                SaveCheckpoint, topics.DISCRIMINATOR_SAVE_CHECKPOINT, callback_group=group)
        self.dispatcher = RolloutDispatcher(self, self.instances, self.rollout_timeout)
        self.metrics = MetricPublisher(self, METRICS)
        self.diagnostics = NodeDiagnostics(self)
        self.stop_requested = stop_requested or threading.Event()
        self.early_stop: EarlyStop | None = None  # set by train() when early_stop_every_steps is set
        self._learning_since: tuple[float, int] | None = None  # (training s, agent steps) at the first update seen
        self.solved = False  # the early-stop rule was met: the run is done before its budget
        self.last_completed: int | None = self.iteration - 1 if resume else None
        self.last_checkpoint: int | None = self.last_completed
        self.checkpoint_abandoned = False  # a checkpoint failed while stopping: a hung node, no final try
        self.schedule = CheckpointSchedule(cfg.checkpoint_every, cfg.checkpoint_every_s)
        self.get_logger().info(
            f"{cfg.sampler} on {cfg.env_id}, {self.mode} mode, {len(self.instances)} instance(s), {self.slots} "
            f"rollouts/iteration, budget {cfg.total_agent_steps} agent steps, run dir {self.run_dir}, run id "
            f"{self.run_id or '(empty)'} (worker hosts: run_id:={self.run_id or '...'})")

    # ------------------------------------------------------------------ subscriptions
    def on_trajectory(self, msg: TrajectoryMsg) -> None:
        refusal = self.inbox.offer(msg, received_ns=time.time_ns())
        if refusal is None:
            self.diagnostics.count("trajectories_accepted")
        elif not refusal.startswith("ignored"):
            reason = refusal.split(":", 1)[0]
            self.diagnostics.reject(reason, f"trajectory from {msg.instance_id or '?'}: {refusal}")

    def _stale(self, iteration: int) -> bool:
        """Statistics of an iteration this trainer already logged (a publisher's history replayed to a late match,
        or a forgery): counted and dropped, so nothing keyed by finished iterations accumulates."""
        if self.last_completed is not None and iteration <= self.last_completed:
            self.diagnostics.count("stale_statistics")
            return True
        return False

    def on_rewards(self, msg: ParticleRewards) -> None:
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
        if refusal is None and np.abs(rewards).max() > REWARD_LIMIT:  # the sampler refuses these too
            refusal = f"rewards up to {np.abs(rewards).max():.3g} in size (a discriminator reward is within " \
                      f"+-{REWARD_LIMIT:g})"
        if refusal is not None:
            self.diagnostics.reject("rewards", f"particle rewards of iteration {msg.iteration}: {refusal}")
            return
        self.discriminator_metrics[int(msg.iteration)] = dict(zip(msg.metric_names, map(float, values)))
        self.rewards[int(msg.iteration)] = rewards.copy()

    def on_sampler_state(self, msg: SamplerState) -> None:
        if self._stale(int(msg.iteration)):
            return
        values = from_field(msg.metric_values, np.float64)
        refusal = self._statistics_refusal(msg.run_id, int(msg.iteration), msg.metric_names, values,
                                           SAMPLER_COLUMNS)
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
        if iteration > self.iteration:
            return f"iteration {iteration} is ahead of the one in progress ({self.iteration})"
        if len(names) != values.size or not np.all(np.isfinite(values)):
            return f"{len(names)} metric names for {values.size} values, or non-finite values"
        if values.size and np.abs(values).max() > plausibility.STATISTIC_LIMIT:
            return f"a value of {np.abs(values).max():.3g} (statistics are within +-{plausibility.STATISTIC_LIMIT:g})"
        foreign = sorted(set(names) - set(columns)) if len(names) <= len(columns) else names[:3]
        if foreign or len(set(names)) != len(names):
            return f"metric names {foreign[:3]} are not this producer's columns ({', '.join(columns)}), or repeat"
        return None

    # ------------------------------------------------------------------ the loop
    @property
    def done(self) -> bool:
        return self.solved or self.agent.transitions_seen >= self.config.total_agent_steps

    def probe(self) -> None:
        """mode probe: ADR iterations around the frozen policy (probe_loop.py); no agent updates, no checkpoints."""
        assert self.frozen is not None
        try:
            run_probe(self, self.frozen, self.probe_iterations)
        except StopRequested:
            self.get_logger().info(f"stopping: {STOP_CAUSE}")

    def train(self) -> None:
        """Run iterations until the budget or Ctrl-C; always ends with a checkpoint of the last completed one."""
        log = open_run_log(self.config, self.run_dir, METRIC_COLUMNS, self.space.names, self.iteration)
        self.evaluation = periodic_evaluation(self.config, self.run_dir, self.iteration)
        self.early_stop = early_stop(self.config, self.run_dir, self.agent.transitions_seen)
        self.iteration_hooks = self.make_hooks(log)
        for hook in self.iteration_hooks:
            hook.on_start(self)  # the early stop: a resumed run whose last kept check met the rule is done
        self._clock_start = (time.perf_counter(), self.wall_time)  # wall_time_s: real time since the run started
        learning: threading.Thread | None = None
        try:
            self.wait_for_graph()
            self.publish_weights()
            pending: tuple | None = None  # async: (iteration, proposals, trajectories, t0, rollout time) to learn from
            while not self.done and not self.stop_requested.is_set():
                t0 = time.perf_counter()
                k = self.iteration
                proposals = self.request_proposals(k)
                min_version = self.agent.policy_version if self.mode == "sync" else 0
                randomized = self.collect(k, proposals, min_version)
                t_rollouts = time.perf_counter() - t0
                self.iteration += 1
                if self.mode == "sync":
                    self.learn_and_log(log, k, proposals, randomized, t0, t_rollouts)
                else:
                    if learning is not None:
                        learning.join()
                    stored = [*randomized, *self.references.get(k, [])] if self.config.learn_from_reference \
                        else randomized  # what the learning block below stores (read before it pops them)
                    # read before the block starts: it adds to transitions_seen while this thread goes on
                    steps_after = self.agent.transitions_seen + sum(t.length for t in stored)
                    pending = (log, k, proposals, randomized, t0, t_rollouts)
                    learning = threading.Thread(target=self.learn_and_log, args=pending, daemon=True)
                    learning.start()
                    if steps_after >= self.config.total_agent_steps:
                        break
        except StopRequested:
            self.get_logger().info(f"stopping: {STOP_CAUSE}")
        finally:
            if learning is not None:
                learning.join()
            if (self.last_completed is not None and self.last_checkpoint != self.last_completed
                    and not self.checkpoint_abandoned):
                try:
                    self.checkpoint(self.last_completed, final=True)
                except CheckpointError as error:
                    self.get_logger().warning(
                        f"no final checkpoint of iteration {self.last_completed} ({error}); {self.resumable()}")
            log.close()
        per_instance = ", ".join(f"{name} {n}" for name, n in self.dispatcher.rollouts_done.items())
        summary = (f"{self.agent.transitions_seen} agent steps, {self.iteration} iterations, rollouts per instance: "
                   f"{per_instance}; run dir {self.run_dir}")
        if self.done:
            self.get_logger().info(f"finished: {summary}")
        else:
            self.get_logger().warning(f"stopped before the end: {summary}; {self.resumable()}")

    def resumable(self) -> str:
        """Where resume:=true would continue, in words."""
        if self.last_checkpoint is None:
            return "no checkpoint was written: resume:=true has nothing to continue from"
        return f"checkpoints/latest.json names iteration {self.last_checkpoint}: resume:=true continues after it"

    def learn_and_log(self, log: RunLog, k: int, proposals: list[ParameterSet], randomized: list[Trajectory],
                      t0: float, t_rollouts: float) -> None:
        t1 = time.perf_counter()
        reference = self.references.pop(k, [])
        learned_from = [*randomized, *(reference if self.config.learn_from_reference else [])]
        undo = self.agent.undo_point(sum(t.length for t in learned_from))  # networks + overwritten rows: cheap
        n_updates, losses = update_agent(self.agent, randomized, self.config.total_agent_steps,
                                         reference if self.config.learn_from_reference else None)
        t_agent = self.last_learning_s = time.perf_counter() - t1
        self.publish_weights()
        rewards = self.rewards_of(k)
        sampler_metrics = self.sampler_metrics_of(k)
        if self.stop_requested.is_set() and self.sampler_learns and (rewards is None or sampler_metrics is None):
            # a helper died (or the graph stops) before finishing iteration k: no consistent state of k exists, so
            # the agent goes back to its state after k - 1, which the final checkpoint then ties to the helpers'
            # states of k - 1 (on disk since k - 1 completed)
            self.agent.undo(undo)
            missing = "the discriminator's rewards" if rewards is None else "the sampler's update"
            self.get_logger().warning(f"iteration {k} did not complete ({missing} never came): the agent is back "
                                      f"at its state after iteration {k - 1}; resume:=true redoes iteration {k}")
            if self.mode == "sync":
                self.iteration = k
            return
        sampler_metrics = sampler_metrics or {}
        elapsed = time.perf_counter() - t0
        result = IterationResult(
            iteration=k, proposals=np.stack([from_field(p.normalized, np.float64) for p in proposals]),
            parameters=np.stack([from_field(p.values, np.float64) for p in proposals]),
            policy_version=min(t.policy_version for t in randomized), randomized=randomized, reference=reference,
            rewards=rewards, n_updates=n_updates, agent_losses=losses, sampler_metrics=sampler_metrics,
            discriminator_metrics=self.discriminator_metrics.pop(k, {}),
            timings={"time_rollouts_s": t_rollouts, "time_agent_s": t_agent, "time_iteration_s": elapsed,
                     "time_transport_s": self.inbox.transport_seconds(k)})
        self.wall_time = self._training_seconds()
        finish_iteration(self, result, self.iteration_hooks)  # early stop, files, progress, learning curve, checkpoint

    # ------------------------------------------------------------------ what the driver's hooks read and call
    @property
    def agent_steps(self) -> int:
        return self.agent.transitions_seen

    @property
    def agent_updates(self) -> int:
        return self.agent.updates_done

    def actor_state_dict(self) -> dict:
        return self.agent.actor_state_dict()

    def count_training_time(self, seconds: float) -> None:
        self.wall_time = self._training_seconds()  # real time since the start: it includes those seconds

    def make_hooks(self, log: RunLog) -> list[Hook]:
        """The bookkeeping after each iteration (adr_core.training.driver), in the in-process trainer's order."""
        hooks: list[Hook] = []
        if self.early_stop is not None:  # training time: the row's wall_time_s includes the check
            hooks.append(EarlyStopHook(self.early_stop, announce=self.get_logger().info))
        hooks += [RunLogHook(log), _Completed(self)]
        if self.evaluation is not None:
            hooks.append(EvaluationHook(self.evaluation))
        return [*hooks, _Checkpoint(self)]

    def _training_seconds(self) -> float:
        """Real time since the run started, periodic evaluations excluded (async iterations overlap: not a sum)."""
        started, wall_before = self._clock_start
        evaluating = self.evaluation.seconds_total if self.evaluation is not None else 0.0
        return wall_before + time.perf_counter() - started - evaluating

    # ------------------------------------------------------------------ steps
    def request_proposals(self, k: int) -> list[ParameterSet]:
        """The sampler's proposals for iteration k (asks again while it waits for the rewards of k-1, and when an
        answer does not come within PROPOSE_ATTEMPT_S: the sampler answers a repeated question with the same
        settings, so a lost answer costs seconds, not the run)."""
        deadline = time.monotonic() + self.service_timeout
        reason = "no answer"
        while True:
            self._check_stop()
            attempt_deadline = min(deadline, time.monotonic() + PROPOSE_ATTEMPT_S)
            response = self._call(self.propose_client,
                                  ProposeParameters.Request(run_id=self.run_id, count=0, iteration=k),
                                  attempt_deadline, stoppable=True)
            foreign = None if response is None or not response.success else next(
                (r for p in response.proposals if (r := run_ids.foreign(p.run_id, self.run_id, "proposals"))), None)
            if foreign is not None:  # another run's sampler answered (same DDS domain): ask again
                self.diagnostics.reject("run_id", foreign)
                response.success, response.message = False, foreign
            if response is not None and response.success:
                proposals = list(response.proposals)
                if proposals[0].iteration != k or len(proposals) != self.slots:
                    raise RuntimeError(f"the sampler proposed iteration {proposals[0].iteration} with "
                                       f"{len(proposals)} settings; the trainer expects iteration {k} with {self.slots}"
                                       f" (restart the sampler with resume:=true, or start a fresh run)")
                return proposals
            if response is not None:
                reason = response.message  # the sampler's last word, e.g. which rewards it still waits for
            if time.monotonic() > deadline:
                raise RuntimeError(f"the sampler did not propose iteration {k} within {self.service_timeout:.0f} s: "
                                   f"{reason}")
            time.sleep(0.01)

    def collect(self, k: int, proposals: list[ParameterSet], min_version: int) -> list[Trajectory]:
        """Roll out every slot of iteration k; returns the randomized trajectories in slot order."""
        def slots_done() -> set[int]:
            return set(range(self.slots)) - set(self.inbox.missing(k, self.slots))

        self.inbox.expect(Expected(k, np.stack([from_field(p.values, np.float64) for p in proposals]),
                                   np.asarray(self.space.reference(), np.float64), min_version))
        self.dispatcher.start(proposals, with_reference=self.learns_from_rewards, min_policy_version=min_version,
                              newest_policy_version=lambda: self.inbox.published_version, slots_done=slots_done)
        while not self.dispatcher.finished.wait(0.05):
            self._check_stop()
        if self.dispatcher.error is not None:
            raise RuntimeError(f"iteration {k}: {self.dispatcher.error}")
        if self.dispatcher.report.reassigned:
            self.diagnostics.count("rollouts_reassigned", self.dispatcher.report.reassigned)
        if not self.learns_from_rewards:
            randomized = self.inbox.take(k, self.slots)
            if self.learns_from_outcomes:
                self.publish_outcomes(k, randomized)
            return randomized
        # ADR: each goal published its reference trajectory before it succeeded; wait for their delivery (metrics)
        deadline = time.monotonic() + 10.0
        while self.inbox.missing(k, self.slots, "reference") and time.monotonic() < deadline:
            self._check_stop()
            self.inbox.wait(0.01)
        if self.inbox.missing(k, self.slots, "reference"):
            learns = " and from the agent's replay (learn_from_reference)" if self.config.learn_from_reference else ""
            self.get_logger().warning(f"iteration {k}: reference trajectories missing from metrics.csv{learns}")
            randomized = self.inbox.take(k, self.slots)
            self.publish_acceptance(k, randomized)  # the discriminator fills the reference slots from its own
            return randomized
        taken = self.inbox.take_kinds(k, self.slots, ("randomized", "reference"))
        self.references[k] = taken["reference"]
        self.publish_acceptance(k, [*taken["randomized"], *taken["reference"]])
        return taken["randomized"]

    def publish_outcomes(self, k: int, randomized: list[Trajectory]) -> None:
        """Boundary ADR: each slot's task score (``outcome_scores``: solved 1, else 0) to the sampler, on the topic the
        discriminator's rewards use for ADR; kept here too, as the iteration's ``rewards``."""
        assert self.outcomes_pub is not None
        scores = outcome_scores(randomized)
        self.rewards[k] = scores
        msg = ParticleRewards(run_id=self.run_id, iteration=k)
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.slots = to_field(np.arange(self.slots), np.uint32)
        msg.rewards = to_field(scores, np.float64)
        self.outcomes_pub.publish(msg)

    def publish_acceptance(self, k: int, accepted: list[Trajectory]) -> None:
        """Which trajectory counts for each slot of iteration k, by digest: the discriminator scores exactly these
        (one acceptance rule for the graph: what the trainer refused, no node keeps)."""
        msg = AcceptedTrajectories(run_id=self.run_id, iteration=k, kinds=[KIND_CODES[t.kind] for t in accepted],
                                   slots=[t.slot for t in accepted], digests=[trajectory_digest(t) for t in accepted])
        msg.header.stamp = self.get_clock().now().to_msg()
        self.accepted_pub.publish(msg)

    def publish_weights(self) -> None:
        msg = policy_weights.to_msg(self.agent.actor_state_dict(), version=self.agent.policy_version,
                                    algorithm=self.config.agent.algorithm, obs_dim=self.agent.obs_dim,
                                    act_dim=self.agent.act_dim, run_id=self.run_id)
        msg.header.stamp = self.get_clock().now().to_msg()
        self.inbox.note_published(self.agent.policy_version)
        self.weights_pub.publish(msg)

    def checkpoint(self, k: int, final: bool = False) -> None:
        """Sampler and discriminator state of iteration k, then the agent, then the manifest (written last)."""
        directory = checkpoint_dir(self.run_dir)
        directory.mkdir(parents=True, exist_ok=True)
        files = {}
        for component, client in self.save_clients.items():
            files[component] = self._component_checkpoint(component, client, k, directory, patient=not final)
        files["agent"] = save_agent(self.run_dir, k, self.agent, self.config, self.space, self.wall_time).name
        write_manifest(self.run_dir, k, files)
        self.last_checkpoint = k
        self.get_logger().info(f"checkpoint of iteration {k} in {directory}")

    def _component_checkpoint(self, component: str, client, k: int, directory: Path, patient: bool) -> str:
        deadline = time.monotonic() + (self.service_timeout if patient else 5.0)
        name = component_file(component, k)
        reason = "no answer"
        while time.monotonic() < deadline:
            if patient and self.stop_requested.is_set():  # Ctrl-C: a hung node gets 5 s more, not the full timeout
                deadline, patient = min(deadline, time.monotonic() + 5.0), False
            if client.service_is_ready():
                response = self._call(client, SaveCheckpoint.Request(run_id=self.run_id, iteration=k,
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
    def _call(self, client, request, deadline: float, stoppable: bool = False):
        """The service's answer, or None by ``deadline``. ``stoppable``: Ctrl-C ends the wait at once (not while
        a checkpoint is being saved)."""
        if not client.wait_for_service(timeout_sec=max(0.0, min(1.0, deadline - time.monotonic()))):
            return None
        future = client.call_async(request)
        while not future.done() and time.monotonic() < deadline:
            self._check_stop(allow_during_checkpoint=not stoppable)
            time.sleep(0.002)
        return future.result() if future.done() else None

    def _check_stop(self, allow_during_checkpoint: bool = False) -> None:
        if self.stop_requested.is_set() and not allow_during_checkpoint:
            raise StopRequested

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
        # sync: the row waits for them (a loaded machine may take seconds); the discriminator and the sampler are
        # required nodes, so a dead one stops the graph rather than this wait
        deadline = time.monotonic() + (self.service_timeout if self.mode in ("sync", "probe") else 0.0)
        while k not in self.sampler_metrics and time.monotonic() < deadline and not self.stop_requested.is_set():
            time.sleep(0.005)
        for old in [i for i in self.sampler_metrics if i < k]:
            del self.sampler_metrics[old]
        return self.sampler_metrics.pop(k, None)

    def wait_for_graph(self) -> None:
        deadline = time.monotonic() + self.service_timeout
        # ADR: the discriminator must be up before iteration 0 (its rewards are kept for late matches, transient-local
        # depth 256, so a subscription that matches late still gets them)
        def discriminator_ready() -> bool:
            return not self.learns_from_rewards or self.rewards_sub.get_publisher_count() >= 1

        while (not self.dispatcher.ready_instances() or not self.propose_client.service_is_ready()
               or not discriminator_ready()):
            self._check_stop()
            if time.monotonic() > deadline:
                raise RuntimeError(f"no sampler, discriminator or simulator instance ({', '.join(self.instances)}) "
                                   f"appeared within {self.service_timeout:.0f} s")
            time.sleep(0.05)
        if self.wait_for_recorder:
            self._wait_for_recorder(self.wait_for_recorder)

    def _wait_for_recorder(self, name: str, timeout: float = 15.0) -> None:
        """Until the recorder has subscribed (it subscribes to the graph's topics at start); a recorder that failed
        (e.g. its bag folder exists) costs this wait, then the run goes on without it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_stop()
            for node, namespace in self.get_node_names_and_namespaces():
                try:
                    if node == name and self.get_subscriber_names_and_types_by_node(node, namespace):
                        return
                except Exception:  # noqa: BLE001 - it left the graph between the two calls
                    pass
            time.sleep(0.05)
        self.get_logger().warning(f"{name} did not subscribe within {timeout:.0f} s: the bag may miss the run's start")

    def _report_progress(self, row: dict, n_updates: int, t_agent: float) -> None:
        budget, steps = self.config.total_agent_steps, self.agent.transitions_seen
        if self._learning_since is None and self.agent.updates_done > 0:
            self._learning_since = (self.wall_time, steps)  # before: rollouts only, far faster than what follows
        eta_text = "ETA once learning has started"
        if self._learning_since is not None and self.wall_time > self._learning_since[0]:
            rate = (steps - self._learning_since[1]) / (self.wall_time - self._learning_since[0])
            eta_text = f"ETA {max(0, budget - steps) / rate / 60:.1f} min" if rate > 0 else eta_text
        updates_per_s = n_updates / t_agent if t_agent > 0 and n_updates else float("nan")
        self.metrics.publish(
            {
                "return_mean": row["return_mean"],
                "reference_return_mean": row.get("reference_return_mean", math.nan),  # ADR only
                "solved_fraction": row["solved_fraction"],
                "critic_loss": row.get("critic_loss", math.nan),
                "actor_loss": row.get("actor_loss", math.nan),
                "entropy_alpha": row.get("entropy_alpha", math.nan),  # SAC only; NaN is not published
                "policy_entropy": row.get("policy_entropy", math.nan),
                "updates_per_s": updates_per_s,
                "agent_steps": steps,
                "iteration_s": row["time_iteration_s"],
            }
        )
        reward = row.get("sampler_reward_mean", math.nan)
        self.get_logger().info(
            f"iteration {row['iteration']}: {steps}/{budget} steps ({100 * min(steps, budget) / budget:.0f}%), "
            f"{eta_text}, return {row['return_mean']:.1f}, solved {row['solved_fraction']:.2f}"
            + (f", discriminator reward {reward:.3f}" if not math.isnan(reward) else "")
            + (f", {updates_per_s:.0f} updates/s" if not math.isnan(updates_per_s) else ""))
        self.diagnostics.set_status(DiagnosticStatus.OK, f"iteration {row['iteration']}, {steps}/{budget} steps")
        self.diagnostics.values.update(iteration=str(row["iteration"]), agent_steps=str(steps))


STOP_CAUSE = "stop requested (Ctrl-C, or the launcher stopping the graph after a node ended)"


def announce_stop(nodes: list[TrainerNode]) -> None:
    """At Ctrl-C, at once: what happens next and about how long it takes (the learning block is not interrupted)."""
    block = nodes[0].last_learning_s if nodes else 0.0
    expected = f" (the last one took {block:.0f} s)" if block >= 1 else ""
    print(f"[adr_trainer] {STOP_CAUSE}: stopping after the current learning block{expected}, then writing the "
          "final checkpoint", file=sys.stderr, flush=True)


def main() -> int:
    created: list[TrainerNode] = []
    stop = stop_on_signals(on_first=lambda: announce_stop(created))  # first: Ctrl-C during start-up is not lost
    init_without_signal_handlers()
    try:
        node = TrainerNode(stop)
        created.append(node)
    except (ValueError, CheckpointError) as error:
        print(f"[fatal] {error}", file=sys.stderr, flush=True)
        rclpy.try_shutdown()
        return 1
    # One spinning thread serves every callback (trajectories, rewards, goal responses, service replies) while the
    # main thread trains: more executor threads only contend with the learner for the GIL.
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    training_over = threading.Event()

    def spin() -> None:
        while not training_over.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=0.1)

    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    status = 0
    try:
        node.probe() if node.mode == "probe" else node.train()
    except (RuntimeError, CheckpointError) as error:
        node.get_logger().error(str(error))
        status = 1
    finally:
        training_over.set()
        spinner.join()
        executor.shutdown(timeout_sec=2.0)
        node.destroy_node()
        rclpy.try_shutdown()
    return status


if __name__ == "__main__":
    raise SystemExit(main())


class _Completed(Hook):
    """The trainer node's own bookkeeping after the row: the iteration counts as completed; progress topics/log."""

    def __init__(self, node: TrainerNode) -> None:
        self.node = node

    def after_row(self, run: object, result: IterationResult, row: dict) -> None:
        self.node.last_completed = result.iteration
        self.node._report_progress(row, result.n_updates, result.timings["time_agent_s"])


class _Checkpoint(Hook):
    """The graph's checkpoint of iteration k (every node's state, then the manifest) when the schedule says so; a
    failure while the graph stops is reported, not raised, and not retried at exit."""

    def __init__(self, node: TrainerNode) -> None:
        self.node = node

    def after_row(self, run: object, result: IterationResult, row: dict) -> None:
        node, k = self.node, result.iteration
        if not node.schedule.due(k + 1):
            return
        try:
            node.checkpoint(k)
            node.schedule.written()
        except CheckpointError as error:
            if not node.stop_requested.is_set():
                raise
            node.get_logger().warning(f"stopping: no checkpoint of iteration {k} ({error}); {node.resumable()}")
            node.checkpoint_abandoned = True  # no second try at exit
