"""``adr_record``: record a graph's topics into a rosbag2 bag (MCAP) under the run directory.

Started by ``record:=true`` of train_sim.launch.py and deploy_real.launch.py (both launchers). It subscribes raw
(no deserialization) to every topic that matches one of its ``topics`` patterns as the topics appear, and writes
each message with its receive time (``adr_ros.bag``: rosbags' MCAP storage, ``metadata.yaml`` for ``ros2 bag
info``, message definitions for Foxglove). Policy weights are never recorded (they are the checkpoints' job).
Full trajectories (``adr/trajectories``, ~40 KB each) are kept at most ``trajectory_rate`` per second (0: none; their
returns are on ``adr/metrics/episode_return`` anyway).

Parameters: ``bag_dir``, ``topics`` (names; a trailing ``*`` matches a prefix), ``trajectory_rate``,
``overwrite`` (an existing bag folder is refused otherwise). On exit it prints what it wrote, per topic.
"""
from __future__ import annotations

import functools
import importlib
import threading
import time
from fnmatch import fnmatch

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.qos import QoSDurabilityPolicy, QoSProfile, QoSReliabilityPolicy

from adr_ros import topics
from adr_ros.bag import BagError, BagWriter
from adr_ros.lifecycle import run_node

TRAIN_TOPICS = ("adr/*", "diagnostics", "joint_states")  # the default; the graphs pass their own (adr/graph.py)
NEVER = ("adr/policy_weights",)  # the checkpoints hold the weights
TRAJECTORIES = topics.TRAJECTORIES


# The training graph's topics (docs/node_graph.md), subscribed at start so that a short run loses nothing to the
# discovery delay (the trainer waits for this node's subscriptions when the graph records); others are discovered.
KNOWN_TYPES = {topics.PROPOSALS: "adr_interfaces/msg/ParameterSet",
               topics.PARTICLE_REWARDS: "adr_interfaces/msg/ParticleRewards",
               topics.SAMPLER_STATE: "adr_interfaces/msg/SamplerState",
               topics.SAMPLE_HISTOGRAM: "adr_interfaces/msg/SampleHistogram",
               topics.TRAJECTORIES: "adr_interfaces/msg/Trajectory",
               "/diagnostics": "diagnostic_msgs/msg/DiagnosticArray"}  # absolute, as every node publishes it
# what their publishers offer (adr_ros.qos): history kept for late joiners
KNOWN_QOS = {topic: {"durability": QoSDurabilityPolicy.TRANSIENT_LOCAL}
             for topic in (topics.PROPOSALS, topics.PARTICLE_REWARDS, topics.SAMPLER_STATE, topics.SAMPLE_HISTOGRAM)}


def message_class(type_name: str) -> type:
    package, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)  # type: ignore[no-any-return]


class RecorderNode(Node):
    def __init__(self) -> None:
        super().__init__("adr_recorder")

        def p(name: str, default, description: str):  # noqa: ANN001, ANN202
            return self.declare_parameter(name, default, ParameterDescriptor(description=description,
                                                                             read_only=True)).value

        bag_dir = p("bag_dir", "runs/bag", "Folder of the rosbag2 bag (must not exist unless overwrite)")
        self.patterns = [t.lstrip("/") for t in p("topics", list(TRAIN_TOPICS), "Topics to record ('*': prefix)")]
        self.trajectory_period = 1.0 / max(p("trajectory_rate", 0.2, "Full trajectories per second (0: none)"), 1e-9)
        overwrite = p("overwrite", False, "Replace an existing bag folder")
        self.bag = BagWriter(bag_dir, overwrite=overwrite, log=lambda m: self.get_logger().error(m))
        self._lock = threading.Lock()
        self._subscribed: set[str] = set()
        self._next_trajectory = 0.0
        for topic, type_name in KNOWN_TYPES.items():  # the graph's own topics: subscribed before they appear
            if self.wanted(topic):
                self.subscribe(self.resolve_topic_name(topic), type_name, KNOWN_QOS.get(topic, {}))
        self.create_timer(1.0, self.discover)
        self.discover()
        self.get_logger().info(f"recording {', '.join(self.patterns)} into {bag_dir}")

    def wanted(self, topic: str) -> bool:
        name = topic.lstrip("/")
        if name in NEVER:
            return False
        if name == TRAJECTORIES and self.trajectory_period > 1e8:
            return False
        return any(fnmatch(name, pattern) for pattern in self.patterns)

    def discover(self) -> None:
        """Subscribe to matching topics that appeared since the last look, once they have a publisher: a topic known
        only from another node's subscription (the viewer's, say) offers no QoS to match yet."""
        for topic, types in self.get_topic_names_and_types():
            if topic in self._subscribed or not self.wanted(topic) or not types:
                continue
            if not self.get_publishers_info_by_topic(topic):
                continue  # looked at again at the next discovery
            self.subscribe(topic, types[0], self.offered_qos(topic))

    def subscribe(self, topic: str, type_name: str, qos: dict) -> None:
        self._subscribed.add(topic)
        try:
            cls = message_class(type_name)
            self.bag.add_topic(topic, type_name)
        except (BagError, ImportError, AttributeError, ValueError) as error:
            self.get_logger().warning(f"not recording {topic}: {error}")
            return
        profile = QoSProfile(depth=256, **{"reliability": QoSReliabilityPolicy.RELIABLE,
                                           "durability": QoSDurabilityPolicy.VOLATILE, **qos})
        self.create_subscription(cls, topic, functools.partial(self.on_message, topic), profile, raw=True)

    def offered_qos(self, topic: str) -> dict:
        """Adapt to what the publishers offer, as ``ros2 bag record`` does: best effort if any publisher offers only
        that (metrics; a reliable subscription would match none of them), and transient local if every publisher
        keeps a history (proposals: what was published before this node subscribed is delivered too)."""
        offered = [info.qos_profile for info in self.get_publishers_info_by_topic(topic)]
        best_effort = any(q.reliability == QoSReliabilityPolicy.BEST_EFFORT for q in offered)
        history = bool(offered) and all(q.durability == QoSDurabilityPolicy.TRANSIENT_LOCAL for q in offered)
        return {"reliability": QoSReliabilityPolicy.BEST_EFFORT if best_effort else QoSReliabilityPolicy.RELIABLE,
                "durability": QoSDurabilityPolicy.TRANSIENT_LOCAL if history else QoSDurabilityPolicy.VOLATILE}

    def on_message(self, topic: str, data: bytes) -> None:
        if topic.lstrip("/") == TRAJECTORIES:
            now = time.monotonic()
            if now < self._next_trajectory:
                return
            self._next_trajectory = now + self.trajectory_period
        with self._lock:
            self.bag.write(topic, self.get_clock().now().nanoseconds, data)

    def finish(self) -> None:
        with self._lock:
            self.bag.close()
        counts = ", ".join(f"{t} {n}" for t, n in sorted(self.bag.counts.items())) or "nothing"
        print(f"[adr_recorder] {self.bag.path}: {counts}" + (f"; {self.bag.dropped} dropped: {self.bag.error}"
                                                            if self.bag.error else ""), flush=True)


def main() -> int:
    # a BagError (an existing bag folder) is a ValueError: run_node prints it as one line and exits 1
    return run_node(RecorderNode, on_shutdown=lambda node: node.finish())  # type: ignore[attr-defined]


if __name__ == "__main__":
    raise SystemExit(main())
