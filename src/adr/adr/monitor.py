"""adr_monitor: watch the ADR graph from a terminal (for users without ros2cli/rqt).

Prints the proposals published on ``adr/proposals`` as JSON lines; ``--propose N`` first asks the sampler
for one iteration of N settings, which makes it a one-shot health check of the sampler. ``--run-id`` watches
(and asks) one run only: the trainer logs its run's id at start; a sampler started on its own has the empty id.
``--key-file`` (the run's ``<run_dir>/run.key``): proposals not signed with it are dropped, and the propose call
is signed with it; asking needs the key (the sampler answers no one else), watching does not (each line then says
``"verified": false``).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from adr_core.cli_types import ArgumentParser, at_least, existing_file, positive_number, text
from adr_interfaces.msg import ParameterSet
from adr_interfaces.srv import ProposeParameters
from adr_ros import parameter_sets, qos, topics
from adr_ros.signing import node_path
from adr_ros.verified_clients import take_only_verified


def _parse_args(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="adr_monitor", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--propose", type=at_least(1), metavar="N", help="call the sampler's propose service for N settings first"
    )
    parser.add_argument(
        "--count",
        type=at_least(1),
        metavar="K",
        help="exit after K proposals were received (default: N with --propose, else never)",
    )
    parser.add_argument(
        "--run-id", metavar="ID", type=text("run id"),
        help="only this run's proposals, and --propose as this run (default: print every run's proposals; --propose "
             "as a sampler started on its own, whose run id is empty)")
    parser.add_argument(
        "--timeout", type=positive_number("seconds"), default=30.0,
        help="give up after this many seconds (default: %(default)s)"
    )
    parser.add_argument(
        "--key-file", type=existing_file("key file"),
        help="the run's key (<run_dir>/run.key): needed by --propose; drops proposals not signed with it")
    parser.add_argument(
        "--run-start", metavar="START", type=text("run start"),
        help="the run's current start (signatures cover it; the trainer logs it): default the last one of "
             "run.starts beside --key-file (the launcher appends every start there)")
    return parser


def current_start(key_file: Path) -> str:
    """The last start of the run whose key is ``key_file`` (``run.starts`` beside it), or ''."""
    from adr.graph import STARTS_FILE

    try:
        starts = (Path(key_file).parent / STARTS_FILE).read_text().split()
    except OSError:
        return ""
    return starts[-1] if starts else ""


def check_in_space(proposal: parameter_sets.Proposal) -> None:
    """A proposal of a known env whose values lie in its space's accepted bounds and agree with the normalized ones
    (ValueError otherwise). A run with a space of its own (other dimension names) is checked for finiteness only."""
    from adr_core.envs import env_ids
    from adr_core.randomization import RandomizationError, space_of

    if proposal.env_id not in env_ids():
        raise ValueError(f"env id {proposal.env_id[:60]!r}{'...' if len(proposal.env_id) > 60 else ''} is not one of "
                         f"{list(env_ids())}")
    space = space_of(proposal.env_id)
    if tuple(proposal.names) != tuple(space.names):
        return
    try:
        space.validate(proposal.values)
        expected = space.from_normalized(proposal.normalized)
    except RandomizationError as error:
        raise ValueError(str(error)) from None
    if not np.allclose(expected, proposal.values, rtol=1e-9, atol=1e-12):
        raise ValueError(f"values {proposal.values.tolist()} do not match normalized {proposal.normalized.tolist()}")


def _proposal_json(msg: ParameterSet, verified: bool) -> str:
    proposal = parameter_sets.from_msg(msg)
    check_in_space(proposal)
    return json.dumps(
        {
            "topic": topics.PROPOSALS,
            "run_id": msg.run_id,
            "env_id": proposal.env_id,
            "iteration": proposal.iteration,
            "slot": proposal.slot,
            "values": dict(zip(proposal.names, proposal.values.tolist())),
            "normalized": proposal.normalized.tolist(),
            "verified": verified,
        }
    )


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(sys.argv[1:] if argv is None else argv)
    expected = args.count if args.count is not None else args.propose
    if args.propose is not None and args.key_file is None:
        print("adr_monitor: --propose asks the sampler for settings, which it answers only when signed with the run's "
              "key: give --key-file <run_dir>/run.key", file=sys.stderr)
        return 2
    signing = None
    if args.key_file is not None:
        from adr_ros.signing import KeyError_, RunSigning

        try:
            start = args.run_start if args.run_start is not None else current_start(args.key_file)
            signing = RunSigning.from_file(args.key_file, args.run_id or "", "/adr_monitor",
                                           lambda line: print(f"adr_monitor: {line}", file=sys.stderr, flush=True),
                                           start=start)
        except KeyError_ as error:
            print(f"adr_monitor: {error}", file=sys.stderr)
            return 2
    rclpy.init()
    node = Node("adr_monitor")
    received: list[ParameterSet] = []
    refused = [0]

    def on_proposal(msg: ParameterSet) -> None:
        if args.run_id is not None and msg.run_id != args.run_id:
            return  # another run's
        if signing is not None and not signing.accept(msg, topics.PROPOSALS):
            return  # not signed with the run's key: said once (RunSigning), counted
        try:
            line = _proposal_json(msg, verified=signing is not None)
        except ValueError as error:  # a malformed message (another publisher on the topic): said once, counted
            refused[0] += 1
            if refused[0] == 1:
                print(f"adr_monitor: refused a malformed proposal ({error}); later ones are only counted",
                      file=sys.stderr, flush=True)
            return
        received.append(msg)
        print(line, flush=True)

    node.create_subscription(ParameterSet, topics.PROPOSALS, on_proposal, qos.RELIABLE_STREAM)
    deadline = time.monotonic() + args.timeout
    status = 0
    try:
        if args.propose is not None:
            assert signing is not None
            # only the sampler's signed answer for this client ends the call (a stranger's server answering first
            # neither blocks nor replaces it)
            client = take_only_verified(node.create_client(ProposeParameters, topics.PROPOSE_SERVICE),
                                        lambda reply: signing.accept(reply, topics.PROPOSE_SERVICE, to_me=True))
            if not client.wait_for_service(timeout_sec=args.timeout):
                print(f"adr_monitor: no sampler serves {topics.PROPOSE_SERVICE}", file=sys.stderr)
                return 1
            # Let the subscription match the sampler's publisher before the proposals go out.
            while node.count_publishers(topics.PROPOSALS) == 0 and time.monotonic() < deadline:
                rclpy.spin_once(node, timeout_sec=0.05)
            request = ProposeParameters.Request(run_id=args.run_id or "", count=args.propose, iteration=-1)
            future = client.call_async(signing.sign(request, to=node_path(node.get_namespace(), topics.SAMPLER_NODE)))
            rclpy.spin_until_future_complete(node, future, timeout_sec=max(0.0, deadline - time.monotonic()))
            response = future.result()
            if response is None or not response.success:
                reason = "timed out" if response is None else response.message
                print(f"adr_monitor: propose failed: {reason}", file=sys.stderr)
                return 1
            print(json.dumps({"service": topics.PROPOSE_SERVICE, "message": response.message,
                              "proposals": len(response.proposals)}), flush=True)
            if "(asked again)" in response.message:  # the sampler's current iteration, read: not published again
                for msg in response.proposals:
                    on_proposal(msg)
        while (expected is None or len(received) < expected) and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
        if expected is not None and len(received) < expected:
            print(f"adr_monitor: received {len(received)} of {expected} proposals in {args.timeout} s", file=sys.stderr)
            status = 1
    except (KeyboardInterrupt, ExternalShutdownException):  # Ctrl-C, or SIGTERM (rclpy's handler shuts down)
        pass
    finally:
        if refused[0]:
            print(f"adr_monitor: refused {refused[0]} malformed proposal(s)", file=sys.stderr, flush=True)
        node.destroy_node()
        rclpy.try_shutdown()
    return status


if __name__ == "__main__":
    sys.exit(main())
