"""Viewer node: subscribes to the graph's inspection topics and serves a live page over HTTP; publishes the sampler's
particles as rviz2 markers.

- ``adr/sample_histogram`` (``SampleHistogram``, latched) and ``adr/sampler_state`` (``SamplerState``, latched);
- with the run's key (``key_file``, as the launch gives it): ``adr/signed_metrics`` (``adr_interfaces/Metrics``, every
  node's metrics signed with the key) and nothing else for the page's metrics; without one, ``adr/metrics/<name>``
  (``std_msgs/Float64``): the names in ``metrics``, plus any such topic that appears later (``discover_metrics``);
- publishes ``adr/particle_markers`` (``visualization_msgs/MarkerArray``, latched) for rviz2;
- serves ``http://<host>:<port>/`` (the page) and ``/state.json`` (its data); ``port`` 0 picks a free port.
"""
from __future__ import annotations

import functools

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from std_msgs.msg import Float64
from visualization_msgs.msg import MarkerArray

from adr_interfaces.msg import Metrics, SampleHistogram, SamplerState
from adr_ros import qos, run_ids, topics
from adr_ros.arrays import from_field
from adr_ros.diagnostics import NodeDiagnostics
from adr_ros.lifecycle import run_node
from adr_ros.metrics import PREFIX as METRIC_PREFIX
from adr_ros.signing import KeyError_, RunSigning
from adr_viewer.live_state import Histogram, LiveState, Particles
from adr_viewer.markers import particle_markers
from adr_viewer.web_server import WebServer

MAX_BINS = 1000  # the sampler's histogram_bins range

PARTICLE_MARKERS = "adr/particle_markers"
METRIC_TYPE = "std_msgs/msg/Float64"
# published by the trainer, discriminator, sampler and simulator nodes (src/adr_*_node/*/node.py)
KNOWN_METRICS = ("return_mean", "reference_return_mean", "solved_fraction", "critic_loss", "actor_loss",
                 "entropy_alpha", "policy_entropy", "updates_per_s", "agent_steps", "iteration_s",
                 "discriminator_loss", "sampler_reward_mean", "d_randomized", "d_reference", "sampler_spread",
                 "svpg_bandwidth", "episode_return", "reference_return", "sim_steps_per_s",
                 "boundary_low_mean", "boundary_high_mean", "boundary_width_mean",
                 "learnability_score_mean", "learnability_success_mean", "alp_mean", "alp_gmm_components")


def _read_only(description: str) -> ParameterDescriptor:
    return ParameterDescriptor(description=description, read_only=True)


class ViewerNode(Node):
    def __init__(self) -> None:
        super().__init__("adr_viewer")
        host = self.declare_parameter("host", "127.0.0.1", _read_only(
            "Address the page is served on (127.0.0.1: this machine only; 0.0.0.0: every interface)")).value
        port = self.declare_parameter("port", 8765, _read_only("HTTP port of the page; 0 = any free port")).value
        history = self.declare_parameter("history", 2000, _read_only("Values kept per metric")).value
        names = self.declare_parameter("metrics", list(KNOWN_METRICS), _read_only(
            "Metric names to subscribe to at start (adr/metrics/<name>)")).value
        self.discover = self.declare_parameter("discover_metrics", True, _read_only(
            "Also subscribe to every adr/metrics/* topic that appears later")).value
        self.marker_frame = self.declare_parameter("marker_frame", "world", _read_only(
            "Frame of the particle markers")).value
        self.marker_origin = list(self.declare_parameter("marker_origin", [0.3, -0.15, 0.0], _read_only(
            "Where the corner u = 0 of the parameter cube is drawn in marker_frame (m)")).value)
        self.marker_size = self.declare_parameter("marker_size", 0.3, _read_only(
            "Side of the drawn parameter cube (m)")).value
        self.run_id = self.declare_parameter("run_id", "", _read_only(
            "Show only the sampler state of this run (the launch sets it); empty: of any run")).value
        key_file = self.declare_parameter("key_file", "", _read_only(
            "The run's key file: show only the run's messages signed with it (sampler state, histogram, metrics; the "
            "launch sets it); empty: show unchecked messages (the viewer steers nothing)")).value
        start = self.declare_parameter("run_start", "", _read_only(
            "This start of the run (the launch sets it): signatures cover it")).value

        self.state = LiveState(history)
        self.diagnostics = NodeDiagnostics(self)  # refused (malformed) messages: rejected_<reason>
        self.signing: RunSigning | None = None
        if key_file:
            if not self.run_id:
                raise ValueError("key_file needs run_id: signatures are checked per run")
            try:
                self.signing = RunSigning.from_file(key_file, self.run_id, self.get_fully_qualified_name(),
                                                    self.get_logger().warning, start=start)
            except KeyError_ as error:  # run_node reports ValueErrors as a one-line fatal error
                raise ValueError(str(error)) from None
            self.signing.count_drops(self.diagnostics.count)
        self.metric_prefix = self.resolve_topic_name(METRIC_PREFIX + "x")[:-1]
        self._metric_subscriptions: dict[str, object] = {}
        if self.signing is not None:  # the run's signed metrics only: a forger's plain Float64 never reaches the page
            self.discover = False
            self.create_subscription(Metrics, topics.SIGNED_METRICS, self.on_signed_metrics, qos.METRICS)
        else:
            for name in names:
                self._subscribe_metric(name)
        self.create_subscription(SampleHistogram, topics.SAMPLE_HISTOGRAM, self.on_histogram, qos.LATCHED)
        self.create_subscription(SamplerState, topics.SAMPLER_STATE, self.on_sampler_state, qos.LATCHED)
        self.markers = self.create_publisher(MarkerArray, PARTICLE_MARKERS, qos.LATCHED)
        if self.discover:
            self.create_timer(2.0, self.discover_metrics)
        try:
            self.server = WebServer(host, port, self.state.snapshot)
        except OSError as error:  # run_node reports ValueErrors as a one-line fatal error
            raise ValueError(f"cannot serve the page on {host}:{port}: {error}") from None
        self.server.start()
        address, bound_port = self.server.address
        self.get_logger().info(f"serving http://{address}:{bound_port}/ (data: /state.json)")

    # ------------------------------------------------------------------ subscriptions
    def _subscribe_metric(self, name: str) -> None:
        if name not in self._metric_subscriptions:
            self._metric_subscriptions[name] = self.create_subscription(
                Float64, METRIC_PREFIX + name, functools.partial(self._on_metric_msg, name), qos.METRICS)

    def _on_metric_msg(self, name: str, msg: Float64) -> None:
        self.on_metric(name, msg.data)

    def on_signed_metrics(self, msg: Metrics) -> None:
        if self._other_run(msg):
            return
        values = from_field(msg.values, np.float64)
        if values.size != len(msg.names):
            self.diagnostics.reject("metric", f"{len(msg.names)} names, {values.size} values")
            return
        for name, value in zip(msg.names, values.tolist()):
            self.on_metric(str(name), float(value))

    def on_metric(self, name: str, value: float) -> None:
        if not np.isfinite(value):  # the page's JSON has no NaN/inf
            self.diagnostics.reject("metric", f"{name} = {value}")
            return
        self.state.add_metric(name, value)

    def discover_metrics(self) -> None:
        for topic, types in self.get_topic_names_and_types():
            if topic.startswith(self.metric_prefix) and METRIC_TYPE in types:
                self._subscribe_metric(topic[len(self.metric_prefix):])

    def _other_run(self, msg: SampleHistogram | SamplerState | Metrics) -> bool:
        refusal = run_ids.foreign(msg.run_id, self.run_id, type(msg).__name__) if self.run_id else None
        if refusal is not None:
            self.diagnostics.reject("run_id", refusal)
            return True
        return self.signing is not None and not self.signing.accept(msg, type(msg).__name__)

    def on_histogram(self, msg: SampleHistogram) -> None:
        if self._other_run(msg):
            return
        counts = from_field(msg.counts, np.uint64)
        if not 0 < msg.bins <= MAX_BINS or counts.size != len(msg.names) * msg.bins:
            self.diagnostics.reject("histogram", f"{len(msg.names)} names x {msg.bins} bins, {counts.size} counts")
            return
        counts = counts.reshape(len(msg.names), int(msg.bins))
        self.state.set_histogram(Histogram(msg.method, int(msg.iteration), list(msg.names), int(msg.bins),
                                           [[int(c) for c in row] for row in counts], int(msg.total)))

    def on_sampler_state(self, msg: SamplerState) -> None:
        if self._other_run(msg):
            return
        d = max(len(msg.names), 1)
        points = from_field(msg.particles, np.float64)
        if points.size % d or not np.all(np.isfinite(points)) or not np.isfinite(msg.spread):
            self.diagnostics.reject("sampler_state", f"{points.size} particle values for {len(msg.names)} names "
                                                     f"(finite: {bool(np.all(np.isfinite(points)))}), spread "
                                                     f"{msg.spread}")
            return
        points = points.reshape(-1, d)
        self.state.set_particles(Particles(msg.method, int(msg.iteration), list(msg.names), points.tolist(),
                                           float(msg.spread)))
        self.markers.publish(particle_markers(
            list(msg.names), points, method=msg.method, iteration=int(msg.iteration), spread=float(msg.spread),
            frame_id=self.marker_frame, origin=self.marker_origin, size=self.marker_size,
            stamp=self.get_clock().now().to_msg()))

    def stop(self) -> None:
        self.server.stop()


def main() -> int:
    return run_node(ViewerNode, on_shutdown=lambda node: node.stop())


if __name__ == "__main__":
    raise SystemExit(main())
