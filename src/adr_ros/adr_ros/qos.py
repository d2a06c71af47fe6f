"""QoS profiles of the ADR graph, chosen per stream."""
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

# Proposals, trajectories and rewards: every message matters, bursts are bounded by the iteration size.
RELIABLE_STREAM = QoSProfile(
    history=HistoryPolicy.KEEP_LAST, depth=256, reliability=ReliabilityPolicy.RELIABLE
)
# Streams of record (proposals): reliable, and the last 256 kept for late joiners (a recorder, rqt, the monitor)
# that subscribe with transient-local durability; volatile subscribers match as before.
RELIABLE_HISTORY = QoSProfile(
    history=HistoryPolicy.KEEP_LAST, depth=256, reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
# Latest-value topics (policy weights, sampler state): late joiners get the last sample.
LATCHED = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
# A reader of a latched topic that must not miss a sample: transient-local like LATCHED (it gets the last one on
# joining), with room for a burst from other publishers on the same topic before its callback runs.
LATCHED_READER = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=256,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
# Metrics for rqt_plot and friends: losing one is harmless.
METRICS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
