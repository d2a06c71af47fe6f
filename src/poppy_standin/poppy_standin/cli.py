"""adr-standin-arm: a stand-in Poppy Ergo Jr on a pty, for dry runs of the deploy graph and transfer tests.

    adr-standin-arm --link /tmp/ttyPOPPY &                            # the reference stand-in
    adr_launch adr deploy_real.launch.py checkpoint:=runs/x port:=/tmp/ttyPOPPY
    adr-standin-arm --link /tmp/ttyPOPPY --setting weak_torque --set latency_s=0.05
    adr-standin-arm --link /tmp/ttyPOPPY --task pusher --puck slippery    # an ErgoPusher rig: table, puck, camera

Six XL-320 servos (ids 1-6) answer protocol 2.0 on the pty behind ``--link``; their horns move by PyBullet physics
of the arm with the servo model of ``--setting`` (poppy_standin/config/standin.yaml: gains, torque caps, latency,
backlash, chosen outside the training's ranges). ``--motion constant`` serves the kinematic bus instead (each horn at
its moving speed, no dynamics: what the driver's tests use). Runs until Ctrl-C or SIGTERM.

``--task pusher`` sets up an ErgoPusher rig: the arm stands at the table with ErgoPusher's puck (``--puck``:
reference, slippery or rough, from the file's ``puck`` section) and a camera tracker, a ROS node in this process
that publishes the puck's position on ``puck`` (geometry_msgs/PointStamped, world frame, 30 Hz, 50 ms latency,
1 mm noise: the file's ``tracker`` section) and puts the puck where ``puck_start`` asks (the rig's operator).
"""
from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from adr_core.cli_types import ArgumentParser, Checked, existing_file, seed, text

from .settings import StandInError, load, parse_assignment
from .xl320 import Xl320Emulator, check_link_path


def _motor_id(value: str) -> int:
    """A Dynamixel id a motor can have: 1-252 (253+ are reserved; 0 is left to the broadcast-adjacent default)."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if not 1 <= number <= 252:
        raise argparse.ArgumentTypeError(f"{number} is not a motor id (1-252)")
    return number


def _link_path(value: str) -> Path:
    try:
        check_link_path(Path(value))
    except OSError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return Path(value)


motor_id = Checked("bounded_integer", "motor id in [1, 252]", _motor_id, lambda _: ["0", "253", "-1", "x"])
LINK_PATH = Checked("link_path", "free path for the port's link", _link_path,
                    lambda scratch: [str(scratch / "a_file"), str(scratch / "a_folder"), str(scratch / "no" / "tty")])


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="adr-standin-arm", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--link", default="/tmp/ttyPOPPY", type=LINK_PATH,
                        help="stable path (symlink) to the emulated port: a free path (or an earlier stand-in's "
                             "link), never an existing file")
    parser.add_argument("--setting", default="reference", type=text("setting name"),
                        help="named servo setting of the file (reference, weak_torque, ...)")
    parser.add_argument("--file", type=existing_file("stand-in YAML"),
                        help="stand-in YAML (default: the packaged standin.yaml)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", type=text("KEY=VALUE"),
                        help="change one servo key, e.g. latency_s=0.05 (repeatable)")
    parser.add_argument("--motion", choices=("physics", "constant"), default="physics",
                        help="physics: PyBullet arm (default); constant: horns at their moving speed, no dynamics")
    parser.add_argument("--ids", type=motor_id, nargs="+", default=list(range(1, 7)),
                        help="motor ids on the bus (1-252, each once)")
    parser.add_argument("--task", choices=("reacher", "pusher"), default="reacher",
                        help="reacher: the arm alone (ErgoReacher); pusher: at the table with a puck and a camera "
                             "tracker (ErgoPusher)")
    parser.add_argument("--puck", default="reference", type=text("puck setting"),
                        help="--task pusher: named puck setting (reference, slippery, rough)")
    parser.add_argument("--puck-set", action="append", default=[], metavar="KEY=VALUE", type=text("KEY=VALUE"),
                        help="--task pusher: change one puck or tracker key, e.g. frictionloss=0.02 or latency_s=0.1")
    parser.add_argument("--tracker-seed", type=seed, default=0, help="--task pusher: seed of the tracker's noise")
    parser.add_argument("--key-file", default="", type=text("key file"),
                        help="--task pusher: the deployment's key; the tracker also publishes its readings signed on "
                             "'signed/puck' and takes starts only signed on 'signed/puck_start' (default: "
                             "$ROS_HOME/adr/deploy.key, created when absent, as deploy_real's default; none: unsigned "
                             "only)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if len(set(args.ids)) != len(args.ids):
        parser.error(f"argument --ids: {args.ids} names a motor twice")
    try:
        standin = load(args.setting, args.file, dict(parse_assignment(a) for a in args.set))
        puck = tracker = None
        if args.task == "pusher":
            if args.motion != "physics":
                raise StandInError("--task pusher needs --motion physics (the puck moves by physics)")
            from .puck import load_puck, parse_puck_assignment

            puck, tracker = load_puck(standin.source, args.puck, dict(parse_puck_assignment(a) for a in args.puck_set))
        elif args.puck != "reference" or args.puck_set or args.key_file:
            raise StandInError("--puck, --puck-set and --key-file need --task pusher")
        key = None
        if args.task == "pusher" and args.key_file != "none":
            from adr_ros.signing import KeyError_, create_key_file, default_deploy_key, read_key

            try:
                key = read_key(args.key_file) if args.key_file else read_key(create_key_file(default_deploy_key()))
            except (KeyError_, OSError) as error:
                raise StandInError(str(error)) from None
    except StandInError as error:
        print(f"adr-standin-arm: {error}", file=sys.stderr)
        return 2
    motion = None
    if args.motion == "physics":
        from .physics import PhysicsArm

        motion = PhysicsArm(standin, puck=puck)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    tracker_thread = None
    if motion is not None and motion.puck is not None and tracker is not None:
        from .puck import Tracker
        from .tracker_node import TrackerThread

        tracker_thread = TrackerThread(motion.puck, Tracker(tracker, args.tracker_seed), key=key)
    try:
        with Xl320Emulator(args.ids, link=args.link, motion=motion):
            what = (f"PyBullet physics, setting {standin.name}: {standin.servo}" if motion else
                    "constant speed, no dynamics")
            if puck is not None:
                what += f"; puck {puck.name}: frictionloss {puck.frictionloss:g} N, damping {puck.damping:g} N*s/m; " \
                        f"tracker on 'puck'{' and signed/puck' if key is not None else ''}: {tracker}"
            print(f"adr-standin-arm: XL-320 motors {args.ids} on {args.link} ({what}); Ctrl-C to stop", flush=True)
            stop.wait()
    finally:
        if tracker_thread is not None:
            tracker_thread.stop()
    if motion is not None:
        print(f"adr-standin-arm: stopped after {motion.steps} physics steps ({motion.dropped_s:.2f} s of wall time "
              f"dropped while the machine stalled the bus thread)", flush=True)
        motion.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
