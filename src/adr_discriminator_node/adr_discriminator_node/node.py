"""Discriminator node: scores each iteration's randomized trajectories (before training on them), then trains.

- ``adr/trajectories``: buffered per iteration; once the trainer's acceptance of iteration k
  (``adr/accepted_trajectories``: which trajectory counts for each slot, by digest) and the randomized and reference
  trajectories it names for every slot 0..n-1 (n = the sampler's proposals per iteration) are in and k-1 is done:
  ``adr_core.iteration.score_then_train`` (score, then train on them) and publish ``adr/particle_rewards``. What the
  trainer refuses is scored by nobody (iteration_buffer.py).
  Malformed, implausible (``adr_core.plausibility``), duplicate and stale trajectories are refused with a logged
  reason and a diagnostics counter.
- ``adr/discriminator/save_checkpoint``: writes the state as of one of the last two completed iterations;
  on shutdown every kept snapshot is written; ``resume:=true`` continues after the run's ``latest.json``.
- ``adr/metrics/*``, ``/diagnostics``.
"""
from __future__ import annotations

import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus
from rcl_interfaces.msg import IntegerRange, ParameterDescriptor
from rclpy.node import Node

from adr_core import plausibility
from adr_core.base.devices import resolve_device
from adr_core.base.seeding import component_seed
from adr_core.discriminator import DiscriminatorRewarder
from adr_core.iteration import score_then_train
from adr_core.rollout import trajectory_digest
from adr_core.training.config import ConfigError
from adr_discriminator_node.checkpoint_payload import make_payload, restore
from adr_discriminator_node.iteration_buffer import CompleteIteration, IterationBuffer, TrajectoryRefused
from adr_interfaces.msg import AcceptedTrajectories, ParticleRewards
from adr_interfaces.msg import Trajectory as TrajectoryMsg
from adr_interfaces.srv import SaveCheckpoint
from adr_ros import qos, run_ids, topics, trajectories
from adr_ros.arrays import to_field
from adr_ros.checkpoints import SnapshotKeeper, load_component
from adr_ros.diagnostics import NodeDiagnostics
from adr_ros.lifecycle import run_node, trainer_may_call
from adr_ros.metrics import MetricPublisher
from adr_ros.receipts import ReceiptSender, is_probe
from adr_ros.run_config import declare_run, declare_signing

COMPONENT = "discriminator"
METRICS = ("discriminator_loss", "sampler_reward_mean", "d_randomized", "d_reference", "discriminator_steps",
           "time_discriminator_s")


class DiscriminatorNode(Node):
    def __init__(self) -> None:
        super().__init__("adr_discriminator")
        self.config, self.run_dir, spec = declare_run(self)
        self.run_id = spec.run_id
        self.signing = declare_signing(self, self.run_id)
        resume = self.declare_parameter("resume", False, ParameterDescriptor(
            description="Load the state named by <run_dir>/checkpoints/latest.json", read_only=True)).value
        max_ahead = self.declare_parameter("max_iterations_ahead", 4, ParameterDescriptor(
            description="Buffer trajectories of at most this many iterations after the one being completed",
            integer_range=[IntegerRange(from_value=1, to_value=1000, step=1)], read_only=True)).value

        cfg = self.config
        self.obs_dim, self.act_dim = spec.obs_dim, spec.act_dim
        if not spec.learns_from_rewards:
            raise ConfigError(f"sampler {cfg.sampler!r} does not learn from rewards: the discriminator node serves "
                              f"ADR runs only (sampler 'adr'); do not start it for this run")
        self.slots = spec.slots
        self.reward_bound = plausibility.reward_bound(cfg.env_id, cfg.reward_bound_per_step)
        self.reference_setting = np.asarray(spec.randomization_space().reference(), np.float64)
        self.discriminator = DiscriminatorRewarder(self.obs_dim, self.act_dim, cfg.discriminator,
                                                   component_seed(cfg.seed, COMPONENT), resolve_device(cfg.device))
        # each completed iteration goes to disk before this node tells anyone
        self.snapshots = SnapshotKeeper(COMPONENT, run_dir=self.run_dir,
                                        checkpoint_every=self.config.checkpoint_every)
        next_iteration = 0
        if resume:
            payload = load_component(self.run_dir, COMPONENT)
            completed = restore(self.discriminator, payload, cfg, f"the {COMPONENT} checkpoint of {self.run_dir}")
            self.snapshots.keep(completed, payload)
            next_iteration = completed + 1
            self.get_logger().info(f"resumed after iteration {completed}")
        self.buffer = IterationBuffer(self.slots, next_iteration, max_ahead)

        self.rewards_pub = self.create_publisher(ParticleRewards, topics.PARTICLE_REWARDS, qos.RELIABLE_HISTORY)
        self.metrics = MetricPublisher(self, METRICS, self.signing)
        self.receipts = ReceiptSender(self, self.signing, self.run_id)  # answers the instances' probes
        self.diagnostics = NodeDiagnostics(self, hardware_id=cfg.env_id)
        self.signing.count_drops(self.diagnostics.count)
        self.create_subscription(TrajectoryMsg, topics.TRAJECTORIES, self.on_trajectory, qos.CRITICAL_STREAM)
        self.create_subscription(AcceptedTrajectories, topics.ACCEPTED_TRAJECTORIES, self.on_accepted,
                                 qos.CRITICAL_HISTORY)
        self.create_service(SaveCheckpoint, topics.DISCRIMINATOR_SAVE_CHECKPOINT, self.on_save_checkpoint,
                            qos_profile=qos.CRITICAL_SERVICE)
        self._show_progress()
        self.get_logger().info(f"{cfg.env_id}: {self.slots} randomized + {self.slots} reference trajectories per "
                               f"iteration, reward {cfg.discriminator.reward}, waiting for iteration {next_iteration}")

    # ------------------------------------------------------------------ trajectories
    def on_trajectory(self, msg: TrajectoryMsg) -> None:
        if not self.signing.accept(msg, topics.TRAJECTORIES):  # before anything counts: a copy cap, a buffer
            return
        if is_probe(msg):  # an instance asks whether its trajectories reach this node: they do
            self.receipts.answer(msg)
            return
        where = (f"{trajectories.KIND_NAMES.get(msg.kind, f'kind {msg.kind}')} trajectory of iteration "
                 f"{msg.parameters.iteration} slot {msg.parameters.slot} from {msg.instance_id or '?'}")
        refusal = run_ids.foreign_trajectory(msg, self.run_id, where)
        if refusal is not None:
            self.diagnostics.reject("run_id", refusal)
            return
        try:
            trajectory = trajectories.from_msg(msg, obs_dim=self.obs_dim, act_dim=self.act_dim)
        except trajectories.MalformedTrajectory as error:
            self.diagnostics.reject("malformed", f"{where}: {error}")
            return
        if msg.parameters.env_id != self.config.env_id:
            self.diagnostics.reject("env_id", f"{where}: env {msg.parameters.env_id!r}, this run is "
                                              f"{self.config.env_id!r}")
            return
        if trajectory.length == 0:
            self.diagnostics.reject("empty", f"{where}: no transitions")
            return
        implausible = plausibility.implausible(trajectory, self.reward_bound)
        if implausible is not None:  # the trainer refuses it too (the same rule): neither keeps it
            self.diagnostics.reject("implausible", f"{where}: {implausible}")
            return
        if trajectory.kind == "reference" and not np.allclose(trajectory.params, self.reference_setting,
                                                              rtol=1e-9, atol=1e-9):
            self.diagnostics.reject("mismatch", f"{where}: ran under {trajectory.params.tolist()}, not the reference "
                                                f"setting {self.reference_setting.tolist()}")
            return
        try:
            self.buffer.add(trajectory, trajectory_digest(trajectory))
        except TrajectoryRefused as error:
            self.diagnostics.reject(error.reason, str(error))
            return
        self.diagnostics.count("trajectories")
        self._complete_ready()

    def on_accepted(self, msg: AcceptedTrajectories) -> None:
        if not self.signing.accept(msg, topics.ACCEPTED_TRAJECTORIES):
            return
        where = f"the trainer's acceptance of iteration {msg.iteration}"
        refusal = run_ids.foreign(msg.run_id, self.run_id, where)
        if refusal is not None:
            self.diagnostics.reject("run_id", refusal)
            return
        kinds = list(msg.kinds)
        if not len(kinds) == len(msg.slots) == len(msg.digests) or any(k not in trajectories.KIND_NAMES for k in kinds):
            self.diagnostics.reject("acceptance", f"{where}: {len(kinds)} kinds, {len(msg.slots)} slots, "
                                                  f"{len(msg.digests)} digests")
            return
        if int(msg.iteration) < self.buffer.next_iteration:  # the trainer's history replayed to a late match
            self.diagnostics.count("acceptance_already_scored")
            return
        try:
            self.buffer.accept(int(msg.iteration), [(trajectories.KIND_NAMES[k], int(slot), str(digest))
                                                    for k, slot, digest in zip(kinds, msg.slots, msg.digests)])
        except TrajectoryRefused as error:
            self.diagnostics.reject(error.reason, str(error))
            return
        self._complete_ready()

    def _complete_ready(self) -> None:
        while (complete := self.buffer.pop_complete()) is not None:
            self._complete(complete)
        self._show_progress()

    def _complete(self, done: CompleteIteration) -> None:
        """The discriminator's step of Algorithm 1 (adr_core.iteration.score_then_train), then the rewards out."""
        started = time.perf_counter()
        rewards, metrics = score_then_train(self.discriminator, done.randomized, done.reference)
        # written first: once the trainer has the rewards of an iteration, this node's state of it is on disk
        self.snapshots.keep(done.iteration, make_payload(done.iteration, self.discriminator, self.config))
        self._publish_rewards(done.iteration, rewards, metrics)
        self.metrics.publish({**metrics, "sampler_reward_mean": float(rewards.mean()),
                              "time_discriminator_s": time.perf_counter() - started})
        self.diagnostics.count("iterations")

    def _publish_rewards(self, iteration: int, rewards: np.ndarray, metrics: dict[str, float]) -> None:
        msg = ParticleRewards(run_id=self.run_id, iteration=iteration)
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.slots = to_field(np.arange(self.slots), np.uint32)
        msg.rewards = to_field(rewards, np.float64)
        msg.metric_names = list(metrics)
        msg.metric_values = to_field(np.array([float(v) for v in metrics.values()]), np.float64)
        self.rewards_pub.publish(self.signing.sign(msg))

    def _show_progress(self) -> None:
        last = self.snapshots.last_completed
        self.diagnostics.values.update(next_iteration=str(self.buffer.next_iteration),
                                       last_completed="none" if last is None else str(last),
                                       buffered_trajectories=str(self.buffer.buffered))
        self.diagnostics.set_status(DiagnosticStatus.OK, f"waiting for iteration {self.buffer.next_iteration}")

    # ------------------------------------------------------------------ checkpoints
    def on_save_checkpoint(self, request: SaveCheckpoint.Request,
                           response: SaveCheckpoint.Response) -> SaveCheckpoint.Response:
        return self.snapshots.serve(request, response, signing=self.signing,
                                    channel=topics.DISCRIMINATOR_SAVE_CHECKPOINT, diagnostics=self.diagnostics,
                                    run_dir=self.run_dir, run_id=self.run_id)

    def save_on_shutdown(self) -> None:
        for path in self.snapshots.save_all(self.run_dir):
            self.get_logger().info(f"wrote {path}")


def main() -> int:
    return run_node(DiscriminatorNode, on_shutdown=lambda node: node.save_on_shutdown(),
                    linger=trainer_may_call(topics.DISCRIMINATOR_SAVE_CHECKPOINT))


if __name__ == "__main__":
    raise SystemExit(main())
