"""adr-identify: measure an Ergo Jr (or the stand-in) and write the randomization space that makes the simulator it.

    adr-identify --env adr/ErgoPusher-v0 --port /tmp/ttyPOPPY --out runs/identify_ref   # record, then fit
    adr-identify --env adr/ErgoPusher-v0 --log runs/identify_ref/log --out runs/identify_again   # fit a log again
    adr-identify --env adr/ErgoPusher-v0 --log runs/x/real_arm_steps.csv --out runs/identify_deploy  # a deploy log

With ``--port``, the identify_arm graph (the driver, pypot and the deploy graph's signed messages:
``adr_launch adr identify_arm.launch.py``) plays an excitation on the arm (steps and sine sweeps of each actuated
joint, one at a time, within +-0.5 rad of the start pose; about 38 s per repeat) and logs it into ``OUT/log``; then
the same commands are replayed in the env's simulated arm and CMA-ES fits each joint's position gain, torque cap and
gear play, and the speed cap and latency, to the measured angles (adr_core.identify). Written into ``OUT``:
``identified.yaml`` (the env's space with those dimensions, ranges centred on the estimates and widened by their
uncertainty; a run trains in it with ``--space OUT/identified.yaml``), ``identification.json`` (every estimate, the
repeats' own, the error before and after), ``identification.md`` and ``traces.png`` (measured vs simulated joint
traces, with the env's own servos and fitted). On the pushing rig the puck tracker's latency, frame period and noise
are measured too. Bad input (an env that is not an Ergo task, a missing port or log, a log of another task or arm,
too short, time going backwards, a value that is not a number, an OUT that is not empty) is one line, exit 2, and
nothing is written.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ENVS = ("adr/ErgoPusher-v0", "adr/ErgoReacher-v0")
LOG_SUBDIR = "log"
XL320_STALL_TORQUE_NM = 0.39  # ROBOTIS e-manual, at 7.4 V


def default_torque_cap() -> float:
    """The most an Ergo Jr servo gives: the XL-320's stall torque at the driver's default torque limit."""
    from poppy_driver.config import load_config

    return XL320_STALL_TORQUE_NM * load_config().safety.torque_limit / 100.0


def _port(text: str) -> str:
    if not Path(text).exists():
        raise argparse.ArgumentTypeError(f"{text}: no such port (is the arm plugged in, or adr-standin-arm running "
                                         f"with --link {text}?)")
    return text


def build_parser() -> argparse.ArgumentParser:
    from adr_core import cli_types as ct

    parser = ct.ArgumentParser(prog="adr-identify", description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", required=True, choices=ENVS, help="the task whose arm is identified")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--port", type=ct.Checked("existing_path", "serial port", _port, lambda s: [str(s / "tty")]),
                        help="record first: the arm's serial port (the stand-in's pty, /dev/ttyACM0, ...)")
    source.add_argument("--log", type=ct.existing_path("identification log"),
                        help="fit an existing log: an identification log folder (OUT/log) or its identify_log.csv, "
                             "or a deploy steps CSV")
    parser.add_argument("--out", required=True, type=ct.output_dir(), help="output folder (new, or empty)")
    parser.add_argument("--max-speed", type=ct.number_in(0.05, 7.0, "speed [rad/s]"), default=None,
                        help="--port: the driver's moving speed [rad/s] while recording (default: the driver's, 1.5; "
                             "identify at the speed you deploy at)")
    parser.add_argument("--repeats", type=ct.integer_in(1, 10, "repeats"), default=2,
                        help="--port: times the excitation is played (1-10) [2]")
    parser.add_argument("--key-file", default="", type=ct.text("key file"),
                        help="--port: the deployment's key (default: $ROS_HOME/adr/deploy.key, as deploy_real; none: "
                             "unsigned)")
    parser.add_argument("--domain-id", type=ct.domain_id, default=None, help="--port: ROS_DOMAIN_ID of the graph")
    parser.add_argument("--budget", type=ct.integer_in(24, 100_000, "evaluations"), default=None,
                        help="CMA-ES evaluations per joint and repeat (default 600; fewer: faster, rougher)")
    parser.add_argument("--workers", type=ct.integer_in(1, 64, "workers"), default=2, help="processes for the fits [2]")
    parser.add_argument("--seed", type=ct.seed, default=0, help="CMA-ES seed [0]")
    parser.add_argument("--torque-cap", type=ct.number_in(0.0, 2.0, "torque [N*m]"), default=None,
                        help="the most torque a servo gives [N*m] (default: the XL-320's 0.39 N*m stall torque at the "
                             "driver's torque limit, 70 %%: 0.273); a joint whose log supports less trains over "
                             "[that, cap]; 0: the fit's own range")
    parser.add_argument("--estimates", type=ct.existing_file("identification.json"), default=None,
                        help="with --log: write the outputs from an earlier identification.json instead of fitting "
                             "(e.g. with another --torque-cap)")
    return parser


def _check(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """What the options' types cannot check alone, before anything is written or started."""
    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        parser.error(f"--out {args.out}: exists and is not an empty folder; choose a new one (nothing written)")
    if args.estimates is not None and args.log is None:
        parser.error("--estimates needs --log (the figure's traces)")


def record(args: argparse.Namespace, log_dir: Path) -> int:
    """The identify_arm graph on the arm; the launcher's exit status."""
    from adr import launcher

    argv = ["adr", "identify_arm.launch.py", f"env:={args.env}", f"log_dir:={log_dir}", f"port:={args.port}",
            f"repeats:={args.repeats}"]
    if args.max_speed is not None:
        argv.append(f"max_speed:={args.max_speed:g}")
    if args.key_file:
        argv.append(f"key_file:={args.key_file}")
    if args.domain_id is not None:
        argv += ["--domain-id", str(args.domain_id)]
    return launcher.main(argv)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _check(args, parser)
    from adr_core.envs import env_record  # noqa: F401  (registers the envs)
    from adr_core.identify.fit import DEFAULT_BUDGET, identify
    from adr_core.identify.log import LogError, read_log
    from adr_core.identify.replay import ENV_MODULES
    from adr_core.identify.report import write_outputs

    actuated = tuple(ENV_MODULES[args.env].ACTUATED)
    out = Path(args.out)
    log_path = Path(args.log) if args.log is not None else out / LOG_SUBDIR
    if args.log is not None:
        try:  # a bad log is refused before anything is written
            log = read_log(log_path, args.env, actuated)
        except LogError as error:
            print(f"adr-identify: error: {error} (nothing written)", file=sys.stderr)
            return 2
    else:
        status = record(args, log_path)
        if status != 0:
            print(f"adr-identify: error: recording on {args.port} failed (the graph's exit status {status}); the "
                  f"driver's and identifier's lines above say why", file=sys.stderr)
            return status if status != 0 else 1
        try:
            log = read_log(log_path, args.env, actuated)
        except LogError as error:
            print(f"adr-identify: error: the recorded log cannot be identified from: {error}", file=sys.stderr)
            return 1
    torque_cap = default_torque_cap() if args.torque_cap is None else (args.torque_cap or None)
    started = time.monotonic()
    if args.estimates is not None:
        import json

        from adr_core.identify.fit import Identification

        try:
            ident = Identification.from_dict(json.loads(Path(args.estimates).read_text()))
        except ValueError as error:
            print(f"adr-identify: error: {args.estimates}: {error} (nothing written)", file=sys.stderr)
            return 2
        if ident.env_id != args.env:
            print(f"adr-identify: error: {args.estimates} identifies {ident.env_id}'s arm, not {args.env}'s "
                  f"(nothing written)", file=sys.stderr)
            return 2
    else:
        print(f"adr-identify: fitting {', '.join(actuated)} of {args.env} to {log_path} ({len(log.state_t)} "
              f"readings, {len(log.segments)} segments) with CMA-ES, {args.workers} worker(s)", flush=True)
        ident = identify(log, actuated, budget=args.budget or DEFAULT_BUDGET, seed=args.seed,
                         progress=lambda line: print(f"  {line}", flush=True), workers=args.workers)
    paths = write_outputs(out, ident, log, str(log_path), torque_cap)
    print(paths["summary"].read_text(), end="")
    done = f"written from {args.estimates}" if args.estimates else f"fitted in {time.monotonic() - started:.0f} s"
    print(f"adr-identify: {done}; train in it with --space {paths['space']} (figure: {paths['figure']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
