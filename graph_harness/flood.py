"""A flood on the graph's topics from its own process (anyone on the domain can): unsigned, well-formed messages on
the topics that carry the run's critical data, as fast as ``--rate`` allows, until ``--seconds`` have passed or it is
stopped (SIGTERM / Ctrl-C); it prints how many it sent as one JSON line.

    python -m graph_harness.flood --run-id storm-run --rate 1200 --seconds 60
    python -m graph_harness.flood --topics rewards --rate 0 --seconds 20      # as fast as it can, one topic

Used by tests/integration/test_fuzz_storm.py and benchmarks/flood_qos.py."""
from __future__ import annotations

import argparse
import json
import signal
import threading
import time

TOPICS = ("rewards", "sampler_state", "trajectories")


def messages(run_id: str):  # noqa: ANN201 - {name: (type, topic, make)}
    from adr_interfaces.msg import ParticleRewards, SamplerState, Trajectory
    from adr_ros import topics

    def rewards() -> ParticleRewards:
        return ParticleRewards(run_id=run_id, iteration=3, slots=list(range(10)), rewards=[-0.7] * 10)

    def sampler_state() -> SamplerState:
        return SamplerState(run_id=run_id, method="adr", iteration=3, names=["main_engine_power"], num_particles=2,
                            particles=[0.5, 0.5], spread=0.1)

    def trajectory() -> Trajectory:
        return Trajectory(run_id=run_id, kind=0, instance_id="flood", policy_version=1, length=2, obs_dim=8,
                          act_dim=2, observations=[0.0] * 16, actions=[0.0] * 4, next_observations=[0.0] * 16,
                          rewards=[0.0, 0.0], terminated=[False, True], episode_return=0.0)

    return {"rewards": (ParticleRewards, topics.PARTICLE_REWARDS, rewards),
            "sampler_state": (SamplerState, topics.SAMPLER_STATE, sampler_state),
            "trajectories": (Trajectory, topics.TRAJECTORIES, trajectory)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graph_harness.flood", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run-id", default="", help="run id the messages carry (default: empty)")
    parser.add_argument("--topics", nargs="+", choices=TOPICS, default=list(TOPICS), help="what to flood")
    parser.add_argument("--rate", type=float, default=1200.0, help="messages per second, 0: unlimited")
    parser.add_argument("--seconds", type=float, default=3600.0, help="stop after this long")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait (matched) before flooding")
    args = parser.parse_args(argv)

    import rclpy
    from rclpy.node import Node

    from adr_ros import qos

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    rclpy.init(signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    node = Node("flood")
    made = messages(args.run_id)
    publishers = [(node.create_publisher(made[name][0], made[name][1], qos.RELIABLE_STREAM), made[name][2])
                  for name in args.topics]
    stop.wait(args.delay)
    sent, started = 0, time.monotonic()
    period = 1.0 / args.rate if args.rate > 0 else 0.0
    while not stop.is_set() and time.monotonic() - started < args.seconds:
        publisher, make = publishers[sent % len(publishers)]
        publisher.publish(make())
        sent += 1
        if period:
            time.sleep(max(0.0, started + sent * period - time.monotonic()))
    print(json.dumps({"flood_sent": sent, "seconds": round(time.monotonic() - started, 2)}), flush=True)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
