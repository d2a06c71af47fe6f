"""Trainer node: the agent learner of the graph, an adapter between ROS and the core's run loop.

Parameters and the run's config become an agent, the graph's steps (graph_steps.py: services, actions and topics)
and an engine (adr_core.engine.remote.remote_engine: Algorithm 1's loop and learning step when other processes do the
rollouts, the rewards and the sampler update). The engine's hooks do the bookkeeping after each iteration as in
``adr-train`` (early stop, metrics.csv, periodic evaluation); this node adds two of its own: progress (topics, log,
diagnostics) and the graph's checkpoint (every node's state of iteration k, then the manifest). One iteration k
(docs/node_graph.md)::

    proposals    = sampler.propose_parameters()                   # service; retried while the sampler awaits rewards
    trajectories = roll out every slot on the simulator instances  # RollOut goals, re-assigned on failure/timeout
    agent.store(randomized trajectories in slot order); agent.update(agent.updates_due())
    publish the new weights (version = gradient steps so far)

In ``async`` mode the update of iteration k runs while iteration k+1 is rolled out with the latest weights;
``probe`` mode runs adr-probe around a frozen policy (probe_loop.py).
"""
from __future__ import annotations

import math
import sys
import threading

import rclpy
from diagnostic_msgs.msg import DiagnosticStatus
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
from rclpy.experimental import EventsExecutor
from rclpy.node import Node

from adr_core.agents import make_agent
from adr_core.base.checkpoint import CheckpointError, CheckpointSchedule
from adr_core.base.devices import DeviceError, resolve_device
from adr_core.base.seeding import component_seed
from adr_core.engine.hooks import Hook
from adr_core.engine.loop import Engine
from adr_core.engine.remote import remote_engine
from adr_core.engine.steps import StopRequested
from adr_core.iteration import IterationResult
from adr_core.probe.policies import load_frozen_policy
from adr_core.run_dir import prepare_run_dir, run_identity
from adr_core.training.config import ConfigError
from adr_core.training.run_hooks import standard_hooks
from adr_ros.checkpoints import checkpoint_dir, write_manifest
from adr_ros.diagnostics import NodeDiagnostics
from adr_ros.lifecycle import init_without_signal_handlers, stop_on_signals
from adr_ros.metrics import MetricPublisher
from adr_ros.parameters import freeze_parameters
from adr_ros.run_config import declare_run, declare_signing
from adr_trainer_node.agent_checkpoint import load_agent, save_agent
from adr_trainer_node.graph_steps import GraphSteps
from adr_trainer_node.probe_loop import run_probe

METRICS = ("return_mean", "reference_return_mean", "solved_fraction", "critic_loss", "actor_loss", "entropy_alpha",
           "policy_entropy", "updates_per_s", "agent_steps", "iteration_s")


class TrainerNode(Node):
    def __init__(self, stop_requested: threading.Event | None = None) -> None:
        super().__init__("adr_trainer")
        self.config, self.run_dir, spec = declare_run(self, default_torch_threads=0)
        prepare_run_dir(self.run_dir)  # an unwritable run_dir: one [fatal] line (RunDirError is a ValueError)
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
        try:
            device = resolve_device(cfg.device)
        except DeviceError as error:
            raise ConfigError(str(error)) from None
        self.agent = make_agent(cfg.agent, spec.obs_dim, spec.act_dim, component_seed(cfg.seed, "agent"), device,
                                cfg.goal_layout)
        self.frozen = None
        if self.mode == "probe":
            if not frozen_spec:
                raise ConfigError("mode probe needs the frozen_policy parameter")
            self.frozen = load_frozen_policy(frozen_spec, cfg.env_id, self.space)
        iteration, wall_time = 0, 0.0
        if resume:
            payload = load_agent(self.run_dir, self.agent, cfg, self.space)
            iteration, wall_time = int(payload["iteration"]) + 1, float(payload["wall_time"])
            self.get_logger().info(f"resumed after iteration {payload['iteration']} "
                                   f"({self.agent.transitions_seen} agent steps)")
        self.stop_requested = stop_requested or threading.Event()
        self.diagnostics = NodeDiagnostics(self)
        self.signing = declare_signing(self, spec.run_id)
        self.signing.count_drops(self.diagnostics.count)
        self.steps = GraphSteps(self, spec, cfg, self.space, self.agent, mode=self.mode, instances=self.instances,
                                rollout_timeout=self.rollout_timeout, service_timeout=self.service_timeout,
                                wait_for_recorder=self.wait_for_recorder, stop_requested=self.stop_requested,
                                diagnostics=self.diagnostics, signing=self.signing,
                                first_iteration=iteration,
                                position=lambda: (self.run.iteration, self.run.last_completed))
        self.run: Engine = remote_engine(self.agent, cfg, self.steps, overlap=self.mode == "async",
                                         stop_requested=self.stop_requested, iteration=iteration,
                                         wall_time=wall_time, warn=self.get_logger().warning)
        self.metrics = MetricPublisher(self, METRICS, self.signing)
        self._learning_since: tuple[float, int] | None = None  # (training s, agent steps) at the first update seen
        self.last_checkpoint: int | None = self.run.last_completed
        self.checkpoint_abandoned = False  # a checkpoint failed while stopping: a hung node, no final try
        self.schedule = CheckpointSchedule(cfg.checkpoint_every, cfg.checkpoint_every_s)
        self.get_logger().info(
            f"{cfg.sampler} on {cfg.env_id}, {self.mode} mode, {len(self.instances)} instance(s), {spec.slots} "
            f"rollouts/iteration, budget {cfg.total_agent_steps} agent steps, run dir {self.run_dir}, run id "
            f"{self.run_id or '(empty)'}, start {self.signing.signer.start or '(none)'} (worker hosts: "
            f"run_id:={self.run_id or '...'} run_start:={self.signing.signer.start or '...'})")

    # ------------------------------------------------------------------ the run
    def probe(self) -> None:
        """mode probe: ADR iterations around the frozen policy (probe_loop.py); no agent updates, no checkpoints."""
        assert self.frozen is not None
        try:
            run_probe(self, self.frozen, self.probe_iterations)
        except StopRequested:
            self.get_logger().info(f"stopping: {STOP_CAUSE}")

    def train(self) -> None:
        """Run iterations until the budget or Ctrl-C; always ends with a checkpoint of the last completed one."""
        run = self.run
        # the standard hooks (the in-process trainer's), this node's bookkeeping after the run's files, then the
        # graph's checkpoint (every node's state, then the manifest)
        standard = standard_hooks(self.config, self.run_dir, run.iteration, self.agent.transitions_seen,
                                  self.space.names, after_log=[_Completed(self)], announce=self.get_logger().info,
                                  identity=run_identity(self.config.env_id, self.space.to_dict(), self.agent.obs_dim,
                                                        self.agent.act_dim))
        evaluation = standard.evaluation
        run.start([*standard.hooks, _Checkpoint(self)],
                  excluded_seconds=lambda: evaluation.seconds_total if evaluation is not None else 0.0)
        try:
            self.steps.wait_for_graph()
            run.run()
        except StopRequested:
            self.get_logger().info(f"stopping: {STOP_CAUSE}")
        finally:
            if (run.last_completed is not None and self.last_checkpoint != run.last_completed
                    and not self.checkpoint_abandoned):
                try:
                    self.checkpoint(run.last_completed, final=True)
                except CheckpointError as error:
                    self.get_logger().warning(
                        f"no final checkpoint of iteration {run.last_completed} ({error}); {self.resumable()}")
            if standard.log is not None:
                standard.log.close()
        if run.failure is not None:  # after the final checkpoint of the last completed iteration (above)
            raise RuntimeError(f"{run.failure}; {self.resumable()}")
        per_instance = ", ".join(f"{name} {n}" for name, n in self.steps.dispatcher.rollouts_done.items())
        summary = (f"{self.agent.transitions_seen} agent steps, {run.iteration} iterations, rollouts per instance: "
                   f"{per_instance}; run dir {self.run_dir}")
        if run.done:
            self.get_logger().info(f"finished: {summary}")
        else:
            self.get_logger().warning(f"stopped before the end: {summary}; {self.resumable()}")

    def resumable(self) -> str:
        """Where resume:=true would continue, in words."""
        if self.last_checkpoint is None:
            return ("no checkpoint was written (no iteration completed): resume:=true has nothing to continue from; "
                    "start the run again (it is seeded: the same run)")
        return f"checkpoints/latest.json names iteration {self.last_checkpoint}: resume:=true continues after it"

    def checkpoint(self, k: int, final: bool = False) -> None:
        """Sampler and discriminator state of iteration k, then the agent, then the manifest (written last)."""
        directory = checkpoint_dir(self.run_dir)
        directory.mkdir(parents=True, exist_ok=True)
        files = self.steps.save_components(k, directory, patient=not final)
        files["agent"] = save_agent(self.run_dir, k, self.agent, self.config, self.space, self.run.wall_time).name
        write_manifest(self.run_dir, k, files)
        self.last_checkpoint = k
        self.get_logger().info(f"checkpoint of iteration {k} in {directory}")

    def report_progress(self, row: dict, n_updates: int, t_agent: float) -> None:
        budget, steps, wall_time = self.config.total_agent_steps, self.agent.transitions_seen, self.run.wall_time
        if self._learning_since is None and self.agent.updates_done > 0:
            self._learning_since = (wall_time, steps)  # before: rollouts only, far faster than what follows
        eta_text = "ETA once learning has started"
        if self._learning_since is not None and wall_time > self._learning_since[0]:
            rate = (steps - self._learning_since[1]) / (wall_time - self._learning_since[0])
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
    block = nodes[0].run.last_learning_s if nodes else 0.0
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
        freeze_parameters(node)  # use_sim_time included: nobody on the domain changes a running node
    except (ValueError, CheckpointError) as error:
        print(f"[fatal] {error}", file=sys.stderr, flush=True)
        rclpy.try_shutdown()
        return 1
    # One spinning thread serves every callback (trajectories, rewards, goal responses, service replies) while the
    # main thread trains. rclpy's EventsExecutor (C++) instead of SingleThreadedExecutor: the Python executor's
    # per-callback bookkeeping holds the GIL long enough to slow every gradient step of the learner thread by
    # 1.6-2x while callbacks fire (benchmarks/learner_context.py); the C++ one costs ~1.05x.
    executor = EventsExecutor()
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
        self.node.run.last_completed = result.iteration
        self.node.report_progress(row, result.n_updates, result.timings["time_agent_s"])


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
