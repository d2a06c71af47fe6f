"""adr_launch: start an ADR node graph without the ``launch`` packages (the pip-only path).

Usage mirrors ``ros2 launch``:

    adr_launch adr train_sim.launch.py env:=adr/LunarLander-v0 seed:=1
    adr_launch adr train_sim.launch.py --show-args

It starts the same processes with the same parameters as the launch file (both read adr/graph.py), prefixes
their output with ``[name]``, restarts nodes marked respawn, stops everything when a required node exits, and
forwards Ctrl-C to every node so each can shut down cleanly. Discovery defaults to this host only and domain
id 42, and the nodes' DDS sockets listen on loopback only (``dds_interfaces:=``, adr/dds_interfaces.py);
``--allow-other-hosts`` (SUBNET discovery, every interface unless ``dds_interfaces:=`` names some) lets nodes on
other machines join.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import yaml
from ament_index_python.packages import PackageNotFoundError, get_package_prefix

from adr import dds_interfaces
from adr.graph import (
    GRAPHS,
    SERVED_EXIT_GRACE_S,
    Graph,
    NodeSpec,
    describe_exit,
    exit_status,
    graph_for_launch_file,
    prepare_files,
)
from adr_core.cli_types import MAX_DOMAIN_ID, ArgumentParser, domain_id, text

RESPAWN_DELAY_S = 2.0


def node_command(spec: NodeSpec) -> list[str]:
    """The command line ``ros2 launch`` would run for ``spec``."""
    try:
        prefix = Path(get_package_prefix(spec.package))
    except PackageNotFoundError as error:
        raise SystemExit(f"adr_launch: package {spec.package!r} is not built; run scripts/setup.sh") from error
    command = [
        str(prefix / "lib" / spec.package / spec.executable),
        *spec.arguments,
        "--ros-args",
        "-r",
        f"__node:={spec.name}",
    ]
    for key, value in spec.parameters.items():
        command += ["-p", f"{key}:={_parameter_literal(value)}"]
    return command


def _parameter_literal(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_parameter_literal(v) for v in value) + "]"
    if isinstance(value, str):
        # -p values are parsed as YAML: quote strings that would otherwise read as another type (or a mapping)
        try:
            plain = isinstance(yaml.safe_load(value), str)
        except yaml.YAMLError:
            plain = False
        return value if plain else "'" + value.replace("'", "''") + "'"
    return repr(value)


@dataclass
class _Running:
    spec: NodeSpec
    process: subprocess.Popen
    pump: threading.Thread


def _pump_output(name: str, stream) -> None:
    for line in iter(stream.readline, b""):
        sys.stdout.write(f"[{name}] {line.decode(errors='replace')}")
        sys.stdout.flush()


def _interrupt_when_the_launcher_dies() -> None:
    """``preexec_fn`` of every node (Linux): the kernel sends the node SIGINT, as Ctrl-C would (the trainer writes
    its checkpoint), when the launcher is gone, even killed with SIGKILL, so no node outlives its launch to act on a
    later graph of the same ROS domain (seen: a killed campaign's policy runner driving the next deployment's arm)."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGINT)  # PR_SET_PDEATHSIG


def _start(spec: NodeSpec, env: dict[str, str]) -> _Running:
    process = subprocess.Popen(node_command(spec), env={**env, **spec.env}, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True,
                               preexec_fn=_interrupt_when_the_launcher_dies if sys.platform == "linux" else None)
    pump = threading.Thread(target=_pump_output, args=(spec.name, process.stdout), daemon=True)
    pump.start()
    print(f"[adr_launch] started {spec.name} (pid {process.pid})", flush=True)
    return _Running(spec, process, pump)


def node_specs(launch_file: str, overrides: dict[str, str]) -> list[NodeSpec]:
    """The graph's nodes for ``overrides``, built in a short-lived child process: building them reads the run
    configuration through adr_core, which imports torch (~300 MiB resident) that the launcher never needs while it
    watches the nodes for hours. Errors (ValueError: a bad argument) come back as they were raised."""
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_build_node_specs, launch_file, overrides).result()


def _build_node_specs(launch_file: str, overrides: dict[str, str]) -> list[NodeSpec]:
    return graph_for_launch_file(launch_file).nodes(overrides)


def run_graph(graph: Graph, specs: list[NodeSpec], env: dict[str, str]) -> int:
    running = [_start(spec, env) for spec in specs]
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    status = 0
    exited: dict[str, float] = {}  # node name -> when it was seen gone (a node that ended on its own)
    try:
        while not stop.is_set() and running:
            for entry in list(running):
                code = entry.process.poll()
                if code is None:
                    continue
                entry.pump.join(timeout=1)
                running.remove(entry)
                exited[entry.spec.name] = time.monotonic()
                if entry.spec.required:
                    status = exit_status(code)
                    stopping = "" if stop.is_set() or code == 0 else ": a required node, stopping the graph"
                    print(f"[adr_launch] {describe_exit(entry.spec.name, code)}{stopping}", flush=True)
                    stop.set()
                else:
                    print(f"[adr_launch] {describe_exit(entry.spec.name, code)}", flush=True)
                    if entry.spec.respawn and not stop.is_set():
                        time.sleep(RESPAWN_DELAY_S)
                        running.append(_start(entry.spec, env))
                        exited.pop(entry.spec.name, None)
            stop.wait(0.2)
    finally:
        killed = _shutdown(running, exited)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if killed and status == 0:  # never 0 when a node had to be killed
        print(f"[adr_launch] {', '.join(killed)} had to be killed: whatever it had not written yet (a final "
              f"checkpoint) is lost; exiting {exit_status(-signal.SIGKILL)}", flush=True)
        return exit_status(-signal.SIGKILL)
    return status


def _shutdown(running: list[_Running], exited: dict[str, float] | None = None) -> list[str]:
    """Ctrl-C to every node; each gets its ``shutdown_timeout``, or ``SERVED_EXIT_GRACE_S`` after the node it
    ``serves`` has exited, during the shutdown or before it (``exited``: node name -> when it was seen gone; a run
    that ends stops its graph after the trainer exited): a hung sampler does not hold the graph for the trainer's
    300 s. Then SIGKILL. Returns the nodes that had to be killed (any: a killed helper may have lost its final
    checkpoint too)."""
    killed = []
    for entry in running:
        if entry.process.poll() is None:
            entry.process.send_signal(signal.SIGINT)
    started = time.monotonic()
    exited = dict(exited or {})
    pending = list(running)
    while pending:
        now = time.monotonic()
        for entry in list(pending):
            code = entry.process.poll()
            if code is not None:
                exited[entry.spec.name] = now
                entry.pump.join(timeout=1)
                print(f"[adr_launch] {describe_exit(entry.spec.name, code)}", flush=True)
                pending.remove(entry)
                continue
            deadline = started + entry.spec.shutdown_timeout
            served_gone = entry.spec.serves in exited and exited[entry.spec.serves] + SERVED_EXIT_GRACE_S < deadline
            if served_gone:
                deadline = exited[entry.spec.serves] + SERVED_EXIT_GRACE_S
            if now >= deadline:
                why = (f" ({SERVED_EXIT_GRACE_S:g} s after {entry.spec.serves}, which it serves, exited)"
                       if served_gone else "")
                print(f"[adr_launch] {entry.spec.name} ignored Ctrl-C for {now - started:.0f} s{why}; killing it",
                      flush=True)
                os.killpg(entry.process.pid, signal.SIGKILL)
                entry.process.wait()
                killed.append(entry.spec.name)
                exited[entry.spec.name] = time.monotonic()
                entry.pump.join(timeout=1)
                pending.remove(entry)
        time.sleep(0.05)
    return killed


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="adr_launch", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("package", type=text("package"), help="always 'adr' (kept for the same shape as ros2 launch)")
    parser.add_argument("launch_file", type=text("launch file"),
                        help=f"one of: {', '.join(f'{name}.launch.py' for name in GRAPHS)}")
    parser.add_argument("assignments", nargs="*", metavar="name:=value", type=text("name:=value"),
                        help="launch arguments (each checked by the graph: --show-args)")
    parser.add_argument("--show-args", "-s", action="store_true", help="list the launch arguments and exit")
    parser.add_argument("--print", dest="print_only", action="store_true", help="print the node commands and exit")
    parser.add_argument("--domain-id", type=domain_id,
                        help=f"ROS_DOMAIN_ID for every node, 0-{MAX_DOMAIN_ID} (default: $ROS_DOMAIN_ID or 42)")
    parser.add_argument("--allow-other-hosts", action="store_true",
                        help="discover nodes on other machines of the subnet, and listen on every interface "
                             "(dds_interfaces:=all unless given; default: this host only, loopback)")
    return parser


def _parse(argv: list[str]) -> tuple[argparse.Namespace, dict[str, str]]:
    parser = build_parser()
    args = parser.parse_intermixed_args(argv)
    if args.package != "adr":
        parser.error(f"package {args.package!r}: adr_launch starts the graphs of the 'adr' package only")
    overrides = {}
    for assignment in args.assignments:
        name, sep, value = assignment.partition(":=")
        if not sep:
            parser.error(f"{assignment!r}: launch arguments are written name:=value")
        overrides[name] = value
    return args, overrides


def _transport(graph: Graph, overrides: dict[str, str], specs: list[NodeSpec]) -> str:
    """What the DDS sockets listen on, for the start line."""
    if specs and specs[0].env.get("FASTRTPS_DEFAULT_PROFILES_FILE"):
        return f"DDS sockets on {graph.resolve(overrides)['dds_interfaces']}"
    own = [name for name in dds_interfaces.PROFILE_VARIABLES if os.environ.get(name)]
    return f"DDS profile from ${own[0]}" if own else "DDS sockets on every interface"


def main(argv: list[str] | None = None) -> int:
    args, overrides = _parse(sys.argv[1:] if argv is None else argv)
    if args.allow_other_hosts:  # other hosts must reach the nodes' sockets too, unless interfaces are named
        overrides.setdefault("dds_interfaces", "all")
    try:
        graph = graph_for_launch_file(args.launch_file)
        if args.show_args:
            for argument in graph.arguments:
                choices = f" (one of: {', '.join(argument.choices)})" if argument.choices else ""
                print(f"'{argument.name}':\n    {argument.description}{choices}\n    (default: '{argument.default}')")
            return 0
        specs = node_specs(args.launch_file, overrides)
    except ValueError as error:
        print(f"adr_launch: {error}", file=sys.stderr)
        return 2
    if args.print_only:
        for spec in specs:
            print(" ".join(node_command(spec)))
        return 0
    env = dict(os.environ)
    if args.domain_id is None:
        try:
            args.domain_id = domain_id(env.get("ROS_DOMAIN_ID", "42"))
        except argparse.ArgumentTypeError as error:
            print(f"adr_launch: $ROS_DOMAIN_ID: {error}", file=sys.stderr)
            return 2
    env["ROS_DOMAIN_ID"] = str(args.domain_id)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "SUBNET" if args.allow_other_hosts else env.get(
        "ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    env["PYTHONUNBUFFERED"] = "1"
    print(f"[adr_launch] {graph.name}: {len(specs)} node(s), ROS_DOMAIN_ID={env['ROS_DOMAIN_ID']}, "
          f"discovery {env['ROS_AUTOMATIC_DISCOVERY_RANGE']}, {_transport(graph, overrides, specs)}", flush=True)
    try:
        prepare_files(specs)
    except ValueError as error:
        print(f"adr_launch: {error}", file=sys.stderr)
        return 2
    return run_graph(graph, specs, env)


if __name__ == "__main__":
    sys.exit(main())
