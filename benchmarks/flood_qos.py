"""Can a flood on a topic displace the real messages before a node reads them? (issue 47, adr_ros/qos.py)

    python -m benchmarks.flood_qos                      # both reader profiles, 20 s flood each
    python -m benchmarks.flood_qos --flood-s 5 --real 20 --json flood.json

Three processes on an isolated DDS domain per reader profile: a reader that takes ``adr/particle_rewards`` and
spends ``--work-ms`` on each message (a node's callback: a signature check, the sampler's bookkeeping), a flooder
that publishes unsigned ``ParticleRewards`` as fast as it can for ``--flood-s`` seconds (anyone on the domain can),
and the real publisher, which sends ``--real`` messages during the flood. The reader counts the real ones it got.
Profiles: ``keep_last_256`` (the nodes' readers before issue 47: qos.RELIABLE_STREAM) and ``keep_all``
(qos.CRITICAL_STREAM, what the nodes read the run's critical data with now). Both publishers use the nodes'
writer profile (qos.RELIABLE_STREAM).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

PROFILES = ("keep_last_256", "keep_all")
TOPIC = "adr/particle_rewards"


def _profile(name: str):  # noqa: ANN202 - a QoSProfile
    from adr_ros import qos

    return {"keep_last_256": qos.RELIABLE_STREAM, "keep_all": qos.CRITICAL_STREAM}[name]


def _role(role: str, profile: str, args: argparse.Namespace) -> None:
    import rclpy
    from rclpy.node import Node

    from adr_interfaces.msg import ParticleRewards
    from adr_ros import qos

    rclpy.init()
    node = Node(f"flood_{role}")
    if role == "reader":
        got = {"real": 0, "flood": 0}

        def on_message(msg: ParticleRewards) -> None:
            got["real" if msg.run_id == "real" else "flood"] += 1
            time.sleep(args.work_ms / 1000.0)

        node.create_subscription(ParticleRewards, TOPIC, on_message, _profile(profile))
        deadline = time.monotonic() + args.flood_s + 20.0
        while time.monotonic() < deadline and got["real"] < args.real:
            rclpy.spin_once(node, timeout_sec=0.1)
        print(json.dumps(got), flush=True)
    elif role == "flooder":
        publisher = node.create_publisher(ParticleRewards, TOPIC, qos.RELIABLE_STREAM)
        junk = ParticleRewards(run_id="flood", iteration=3, slots=list(range(10)), rewards=[0.5] * 10)
        time.sleep(2.0)  # matched
        sent, end = 0, time.monotonic() + args.flood_s
        while time.monotonic() < end:
            publisher.publish(junk)
            sent += 1
        print(json.dumps({"flood_sent": sent}), flush=True)
    else:
        publisher = node.create_publisher(ParticleRewards, TOPIC, qos.RELIABLE_STREAM)
        time.sleep(3.0)  # the flood is on
        for i in range(args.real):
            publisher.publish(ParticleRewards(run_id="real", iteration=i, slots=list(range(10)), rewards=[0.1] * 10))
            time.sleep(max(0.0, args.flood_s - 4.0) / args.real)
        end = time.monotonic() + 20.0  # answer the reader's requests for what it refused while full
        while time.monotonic() < end and publisher.get_subscription_count() > 0:
            rclpy.spin_once(node, timeout_sec=0.1)
    node.destroy_node()
    rclpy.try_shutdown()


def measure(profile: str, domain: int, args: argparse.Namespace) -> dict:
    from graph_harness.ros_processes import isolated_ros_env

    env = isolated_ros_env(domain)
    base = [sys.executable, "-m", "benchmarks.flood_qos", "--flood-s", str(args.flood_s), "--real", str(args.real),
            "--work-ms", str(args.work_ms), "--profile", profile, "--role"]
    reader = subprocess.Popen([*base, "reader"], env=env, stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    flooder = subprocess.Popen([*base, "flooder"], env=env, stdout=subprocess.PIPE, text=True)
    real = subprocess.Popen([*base, "real"], env=env, stdout=subprocess.DEVNULL)
    got = json.loads(reader.communicate(timeout=args.flood_s + 60)[0].strip().splitlines()[-1])
    sent = json.loads(flooder.communicate(timeout=60)[0].strip().splitlines()[-1])
    real.wait(timeout=60)  # it ends by itself once the reader no longer needs it
    return {"profile": profile, "real_sent": args.real, "real_received": got["real"], "flood_received": got["flood"],
            **sent}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.flood_qos", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flood-s", type=float, default=20.0, help="seconds of flood (default 20)")
    parser.add_argument("--real", type=int, default=50, help="real messages sent during the flood (default 50)")
    parser.add_argument("--work-ms", type=float, default=0.5, help="reader's time per message (default 0.5 ms)")
    parser.add_argument("--domain", type=int, default=91, help="first ROS domain id used (one per profile)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--profile", choices=PROFILES, help=argparse.SUPPRESS)
    parser.add_argument("--role", choices=("reader", "flooder", "real"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role:
        _role(args.role, args.profile, args)
        return 0
    rows = [measure(profile, args.domain + i, args) for i, profile in enumerate(PROFILES)]
    print("| reader profile | real received / sent | flood messages sent | flood messages read |")
    print("|---|---|---|---|")
    for row in rows:
        print(f"| {row['profile']} | {row['real_received']} / {row['real_sent']} | {row['flood_sent']} | "
              f"{row['flood_received']} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
