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
# The readers of the run's critical data (trajectories, acceptance, particle rewards, the sampler's state, policy
# weights): reliable and KEEP_ALL. A KEEP_LAST reader drops its oldest unread sample for every new one, so anyone on
# the domain who publishes faster than the node reads (a flood; messages of no key are dropped only once read)
# displaces the real sample before its callback could see it: measured with benchmarks/flood_qos.py, 0 of 50 real
# messages reached a depth-256 reader under a flood, 50 of 50 a KEEP_ALL one. A reliable KEEP_ALL reader never
# drops a sample it accepted: when its history is full it refuses new ones, and reliable writers (a forger's too:
# a reliable reader matches reliable writers only) send them again later, so a flood delays the real data but
# cannot remove it. The writers keep their KEEP_LAST 256 (256 is far above what one publishes per iteration).
CRITICAL_STREAM = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE)
# ... and for topics whose late joiners must get what was published before (transient local: the sampler's state,
# the particle rewards, the acceptance, the latched weights)
CRITICAL_HISTORY = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE,
                              durability=DurabilityPolicy.TRANSIENT_LOCAL)
# The run's services and the rollout action's goal and result services: requests and answers kept all, for the same
# reason (the default service profile keeps the last 10: a flood of requests would displace the trainer's own).
CRITICAL_SERVICE = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE)
# Metrics for rqt_plot and friends: losing one is harmless.
METRICS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
