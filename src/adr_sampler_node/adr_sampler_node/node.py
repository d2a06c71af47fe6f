"""Sampler node: the run's sampler (ADR/SVPG, UDR, baseline, fixed range) behind a service.

- ``adr/propose_parameters``: each call is one sampler iteration; proposals are returned and published on
  ``adr/proposals``. A learning sampler (ADR) answers ``success=false`` until the rewards of its previous
  iteration arrived, so iterations never overlap. Samplers advance only in turn: a call for the iteration already
  answered gets the same settings again, a call for the next one advances, any other is refused; ``iteration = -1``
  ("whichever is current", e.g. ``adr_monitor --propose``) is a read once an iteration was answered: it returns
  that iteration's settings and advances nothing, so a second client cannot push a UDR or fixed-range sampler
  (which await no rewards) ahead of its trainer.
- ``adr/particle_rewards``: the discriminator's rewards of an iteration -> ``sampler.update`` (SVPG step).
- ``adr/sampler_state`` and ``adr/sample_histogram`` (latched) for inspection, ``adr/metrics/*``, ``/diagnostics``.
- ``adr/save_checkpoint``: writes the state as of a completed iteration; ``resume:=true`` loads the run's latest.
"""
from __future__ import annotations

import numpy as np
import torch
from diagnostic_msgs.msg import DiagnosticStatus
from rcl_interfaces.msg import IntegerRange, ParameterDescriptor
from rclpy.node import Node

from adr_core.base.seeding import component_seed
from adr_core.iteration import propose, update_sampler
from adr_core.report.sampling_stats import mean_pairwise_distance
from adr_core.samplers import Sampler, SamplerError, feedback_path
from adr_interfaces.msg import ParameterSet, ParticleRewards, SampleHistogram, SamplerState
from adr_interfaces.srv import ProposeParameters, SaveCheckpoint
from adr_ros import parameter_sets, qos, run_ids, topics
from adr_ros.arrays import from_field, to_field
from adr_ros.checkpoints import SnapshotKeeper, load_component
from adr_ros.diagnostics import NodeDiagnostics
from adr_ros.lifecycle import run_node, trainer_may_call
from adr_ros.metrics import MetricPublisher
from adr_ros.run_config import declare_run, declare_signing

COMPONENT = "sampler"
METRICS = ("sampler_reward_mean", "sampler_spread")  # every sampler's; then its record's metric_columns


class SamplerNode(Node):
    def __init__(self) -> None:
        super().__init__("adr_sampler")
        self.config, self.run_dir, spec = declare_run(self)
        self.run_id = spec.run_id
        self.signing = declare_signing(self, self.run_id)
        bins = self.declare_parameter("histogram_bins", 20, ParameterDescriptor(
            description="Bins per dimension of the published sampling histogram",
            integer_range=[IntegerRange(from_value=2, to_value=1000, step=1)], read_only=True)).value
        resume = self.declare_parameter("resume", False, ParameterDescriptor(
            description="Load the state named by <run_dir>/checkpoints/latest.json", read_only=True)).value
        cfg = self.config
        self.space = spec.randomization_space()
        self.sampler: Sampler = cfg.make_sampler(self.space, component_seed(cfg.seed, COMPONENT))
        self.learns = feedback_path(self.sampler) != "none"  # it awaits each iteration's rewards or task scores
        self.iteration = 0  # the next iteration to propose
        self.awaiting_rewards_of: int | None = None
        self.answered: tuple[int, list[ParameterSet]] | None = None  # the last iteration proposed, for re-asks
        self.histogram = np.zeros((self.space.ndim, bins), dtype=np.uint64)
        # each completed iteration goes to disk before this node tells anyone
        self.snapshots = SnapshotKeeper(COMPONENT, run_dir=self.run_dir,
                                        checkpoint_every=self.config.checkpoint_every)
        if resume:
            state = load_component(self.run_dir, COMPONENT)
            self.sampler.load_state_dict(state["state"])
            self.iteration = int(state["iteration"]) + 1
            self.histogram = state["histogram"].numpy().astype(np.uint64).reshape(self.histogram.shape)
            self.get_logger().info(f"resumed after iteration {state['iteration']}")

        self.proposals_pub = self.create_publisher(ParameterSet, topics.PROPOSALS, qos.RELIABLE_HISTORY)
        self.state_pub = self.create_publisher(SamplerState, topics.SAMPLER_STATE, qos.LATCHED)
        self.histogram_pub = self.create_publisher(SampleHistogram, topics.SAMPLE_HISTOGRAM, qos.LATCHED)
        self.metrics = MetricPublisher(self, METRICS + cfg.sampler_record.metric_columns, self.signing)
        self.diagnostics = NodeDiagnostics(self)
        self.signing.count_drops(self.diagnostics.count)
        self.create_service(ProposeParameters, topics.PROPOSE_SERVICE, self.on_propose,
                            qos_profile=qos.CRITICAL_SERVICE)
        self.create_service(SaveCheckpoint, topics.SAMPLER_SAVE_CHECKPOINT, self.on_save_checkpoint,
                            qos_profile=qos.CRITICAL_SERVICE)
        # transient-local: rewards published before this subscription matched the discriminator's publisher still
        # arrive (a fresh-clone CI run lost iteration 0's and waited for them until the trainer gave up)
        self.create_subscription(ParticleRewards, topics.PARTICLE_REWARDS, self.on_rewards, qos.CRITICAL_HISTORY)
        self.diagnostics.set_status(DiagnosticStatus.OK, f"ready to propose iteration {self.iteration}")
        self.get_logger().info(f"{cfg.sampler} sampler over {self.space.ndim}-D space of {cfg.env_id} "
                               f"({', '.join(self.space.names)}), {self.sampler.num_proposals} settings/iteration")

    # ------------------------------------------------------------------ propose
    def on_propose(self, request: ProposeParameters.Request,
                   response: ProposeParameters.Response) -> ProposeParameters.Response:
        return self.signing.answer(self._propose(request, response), request)

    def _propose(self, request: ProposeParameters.Request,
                 response: ProposeParameters.Response) -> ProposeParameters.Response:
        if not self.signing.accept(request, topics.PROPOSE_SERVICE, to_me=True):
            response.success, response.message = False, "refused: the call is not signed with the run's key"
            return response
        refusal = run_ids.foreign(request.run_id, self.run_id, "a propose call")
        if refusal is not None:
            response.success, response.message = False, refusal
            self.diagnostics.reject("run_id", refusal)
            return response
        if self.answered is not None and request.iteration in (-1, self.answered[0]):  # the same settings again
            response.proposals = list(self.answered[1])
            response.success = True
            response.message = f"iteration {self.answered[0]}: {len(response.proposals)} proposals (asked again)"
            self.diagnostics.count("proposals_asked_again")
            return response
        if request.iteration not in (-1, self.iteration):
            response.success = False
            response.message = (f"iteration {request.iteration} asked; the next iteration is {self.iteration}"
                                + (f" (waiting for the rewards of iteration {self.awaiting_rewards_of})"
                                   if self.awaiting_rewards_of is not None else ""))
            if self.awaiting_rewards_of is None or request.iteration != self.iteration + 1:
                self.diagnostics.reject("iteration", response.message)
            return response
        if self.awaiting_rewards_of is not None:
            response.success = False
            response.message = f"waiting for the rewards of iteration {self.awaiting_rewards_of}"
            return response
        if request.count not in (0, self.sampler.num_proposals):
            response.success = False
            response.message = (f"this sampler proposes {self.sampler.num_proposals} settings per iteration "
                                f"(ask for 0 or {self.sampler.num_proposals}), not {request.count}")
            self.diagnostics.reject("count", response.message)
            return response
        proposals = propose(self.sampler, self.space)  # the core's step
        normalized, physical = proposals.normalized, proposals.physical
        stamp = self.get_clock().now().to_msg()
        for slot, (values, unit) in enumerate(zip(physical, normalized)):
            msg = parameter_sets.to_msg(parameter_sets.Proposal(
                self.space.env_id, self.iteration, slot, tuple(self.space.names), values, unit), self.run_id)
            msg.header.stamp = stamp
            self.signing.sign(msg)
            response.proposals.append(msg)
            self.proposals_pub.publish(msg)
        self._count_in_histogram(normalized)
        response.success = True
        response.message = f"iteration {self.iteration}: {len(normalized)} proposals"
        self.answered = (self.iteration, list(response.proposals))
        if self.learns:
            self.awaiting_rewards_of = self.iteration
        else:
            self._complete_iteration({})
        self.diagnostics.count("proposals", len(normalized))
        return response

    # ------------------------------------------------------------------ rewards
    def on_rewards(self, msg: ParticleRewards) -> None:
        if not self.signing.accept(msg, topics.PARTICLE_REWARDS):
            return
        refusal = run_ids.foreign(msg.run_id, self.run_id, f"particle rewards of iteration {msg.iteration}")
        if refusal is not None:
            self.diagnostics.reject("run_id", refusal)
            return
        if not self.learns:
            self.diagnostics.reject("not_learning", f"{self.config.sampler} sampler ignores rewards")
            return
        if msg.iteration < self.iteration:  # (awaiting k means self.iteration is still k)
            self.diagnostics.count("rewards_already_applied")  # the publisher's history, replayed to a late match
            return
        if msg.iteration != self.awaiting_rewards_of:
            self.diagnostics.reject("iteration", f"rewards of iteration {msg.iteration}, awaiting "
                                                 f"{self.awaiting_rewards_of}")
            return
        slots = from_field(msg.slots, np.uint32)
        rewards = from_field(msg.rewards, np.float64)
        if not np.array_equal(slots, np.arange(self.sampler.num_proposals)) or rewards.size != slots.size:
            self.diagnostics.reject("shape", f"need rewards for slots 0..{self.sampler.num_proposals - 1} in order, "
                                             f"got {slots.size} slots and {rewards.size} rewards")
            return
        try:
            # the core's step: SVPG (eq. 2) on the discriminator's rewards; boundary ADR on the task scores the
            # trainer sends (the same message)
            metrics = update_sampler(self.sampler, rewards)
        except SamplerError as error:
            self.diagnostics.reject("rewards", str(error))
            return
        self.metrics.publish({"sampler_reward_mean": float(rewards.mean()), **metrics})
        self.awaiting_rewards_of = None
        self._complete_iteration(metrics)

    # ------------------------------------------------------------------ bookkeeping
    def _complete_iteration(self, metrics: dict[str, float]) -> None:
        completed = self.iteration
        self.snapshots.keep(completed, {"iteration": completed, "state": self.sampler.state_dict(),
                                        "histogram": torch.from_numpy(self.histogram.astype(np.int64))})
        self.iteration += 1
        self._publish_state(completed, metrics)
        self.diagnostics.set_status(DiagnosticStatus.OK, f"completed iteration {completed}")
        self.diagnostics.values["iteration"] = str(completed)

    def _count_in_histogram(self, normalized: np.ndarray) -> None:
        bins = self.histogram.shape[1]
        index = np.clip((normalized * bins).astype(np.int64), 0, bins - 1)
        for dim in range(self.space.ndim):
            self.histogram[dim] += np.bincount(index[:, dim], minlength=bins).astype(np.uint64)

    def _publish_state(self, iteration: int, metrics: dict[str, float] | None = None) -> None:
        points = self._particle_points()
        spread = mean_pairwise_distance(points)
        metrics = metrics or {}
        state = SamplerState(run_id=self.run_id, method=self.config.sampler, iteration=iteration,
                             names=list(self.space.names),
                             num_particles=len(points), particles=to_field(points, np.float64), spread=spread,
                             metric_names=list(metrics),
                             metric_values=to_field(np.array([float(v) for v in metrics.values()]), np.float64))
        state.header.stamp = self.get_clock().now().to_msg()
        self.state_pub.publish(self.signing.sign(state))
        histogram = SampleHistogram(run_id=self.run_id, method=self.config.sampler, iteration=iteration,
                                    names=list(self.space.names),
                                    bins=self.histogram.shape[1], counts=self.histogram.reshape(-1).tolist(),
                                    total=int(self.histogram[0].sum()))
        histogram.header.stamp = state.header.stamp
        self.histogram_pub.publish(self.signing.sign(histogram))
        self.metrics.publish({"sampler_spread": spread})

    def _particle_points(self) -> np.ndarray:
        points = self.sampler.particle_points()  # SVPG particles' current points; none for the other samplers
        return np.empty((0, self.space.ndim)) if points is None else points.reshape(-1, self.space.ndim)

    def on_save_checkpoint(self, request: SaveCheckpoint.Request,
                           response: SaveCheckpoint.Response) -> SaveCheckpoint.Response:
        return self.snapshots.serve(request, response, signing=self.signing, channel=topics.SAMPLER_SAVE_CHECKPOINT,
                                    diagnostics=self.diagnostics, run_dir=self.run_dir, run_id=self.run_id)

    def save_on_shutdown(self) -> None:
        for path in self.snapshots.save_all(self.run_dir):
            self.get_logger().info(f"wrote {path}")


def main() -> int:
    return run_node(SamplerNode, on_shutdown=lambda node: node.save_on_shutdown(),
                    linger=trainer_may_call(topics.SAMPLER_SAVE_CHECKPOINT))


if __name__ == "__main__":
    raise SystemExit(main())
