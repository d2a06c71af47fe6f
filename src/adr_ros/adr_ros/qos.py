"""QoS profiles of the ADR graph, chosen per stream."""
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

# Proposals, trajectories and rewards: every message matters, bursts are bounded by the iteration size.
RELIABLE_STREAM = QoSProfile(
    history=HistoryPolicy.KEEP_LAST, depth=256, reliability=ReliabilityPolicy.RELIABLE
)
# Streams of record (proposals, particle rewards): reliable, and the last 256 kept for late joiners (a recorder, rqt,
# the monitor) that subscribe with transient-local durability; volatile subscribers match as before. Also the reader
# side of a latched topic that must not miss a sample (the trainer's sampler state, the sims' weights): it gets the
# last one on joining like LATCHED, with room for a burst from other publishers before its callback runs.
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
# Metrics for rqt_plot and friends: losing one is harmless.
METRICS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
