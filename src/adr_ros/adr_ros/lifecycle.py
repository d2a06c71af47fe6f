"""Running a node until Ctrl-C without interrupting a callback half-way.

rclpy's default SIGINT handling raises KeyboardInterrupt wherever the main thread is, possibly in the middle of a
training step or a checkpoint write. ``spin_until_shutdown`` instead lets the running callback finish, then returns,
so the node can save its state and exit cleanly.
"""
from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import rclpy
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from adr_core.base.checkpoint import CheckpointError
from adr_ros.parameters import freeze_parameters


def init_without_signal_handlers(args: list[str] | None = None) -> None:
    rclpy.init(args=args if args is not None else sys.argv, signal_handler_options=SignalHandlerOptions.NO)


def stop_on_signals(stop: threading.Event | None = None,
                    on_first: Callable[[], None] | None = None) -> threading.Event:
    """SIGINT/SIGTERM set the returned event (install it first thing: a signal during start-up is not lost).

    ``on_first`` runs at the first signal, at once (e.g. to say how long the stop will take)."""
    stop = stop or threading.Event()

    def handler(*_: object) -> None:
        first = not stop.is_set()
        stop.set()
        if first and on_first is not None:
            on_first()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, handler)
    return stop


def spin_until_shutdown(node: Node, stop: threading.Event | None = None, executor: Executor | None = None, *,
                        linger: Callable[[], bool] | None = None, linger_timeout: float = 300.0) -> threading.Event:
    """Spin ``node`` until SIGINT/SIGTERM or ``stop`` is set; returns the stop event.

    ``linger``: after the stop, keep serving while it returns True (at most ``linger_timeout`` s) — e.g. while the
    trainer still needs this node to finish the iteration it is checkpointing.
    """
    stop = stop or stop_on_signals()
    executor = executor or SingleThreadedExecutor()
    executor.add_node(node)
    try:
        while not stop.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
        deadline = time.monotonic() + linger_timeout
        while linger is not None and rclpy.ok() and time.monotonic() < deadline and linger():
            executor.spin_once(timeout_sec=0.1)
    except ExternalShutdownException:
        pass
    finally:
        executor.remove_node(node)
    return stop


NodeT = TypeVar("NodeT", bound=Node)


def run_node(make_node: Callable[[], NodeT], on_shutdown: Callable[[NodeT], None] | None = None, *,
             make_executor: Callable[[], Executor] | None = None,
             linger: Callable[[NodeT], bool] | None = None) -> int:
    """``main()`` of an ADR node: build it, spin until Ctrl-C, run ``on_shutdown``, exit 0 (1 if it failed to start).

    ``make_executor`` (called after ``rclpy.init``): e.g. a MultiThreadedExecutor for a node whose callbacks block
    while waiting for another callback; default a SingleThreadedExecutor. ``linger(node)``: see spin_until_shutdown.
    """
    stop = stop_on_signals()
    init_without_signal_handlers()
    try:
        node = make_node()
    except ValueError as error:  # configuration errors name what is wrong
        print(f"[fatal] {error}", file=sys.stderr, flush=True)
        rclpy.try_shutdown()
        return 1
    freeze_parameters(node)  # use_sim_time included: nobody on the domain changes a running node (parameters.py)
    executor = make_executor() if make_executor is not None else None
    status = 0
    try:
        spin_until_shutdown(node, stop, executor=executor, linger=None if linger is None else (lambda: linger(node)))
        if on_shutdown is not None:
            on_shutdown(node)
    except CheckpointError as error:  # e.g. a full disk: one line naming the path and the OS's reason, exit 1
        print(f"[fatal] {error}", file=sys.stderr, flush=True)
        status = 1
    finally:
        if executor is not None:
            executor.shutdown(timeout_sec=0)
        node.destroy_node()
        rclpy.try_shutdown()
    return status


TRAINER_NODE = "adr_trainer"


def trainer_may_call(service: str) -> Callable[[Node], bool]:
    """A ``linger`` for a node whose ``service`` the trainer calls for its final checkpoint (sampler, discriminator):
    True while the trainer (``adr_trainer`` in this node's namespace) is listed and a client of ``service`` is on the
    graph, i.e. while the trainer may still call it.

    The name alone is not enough: a process takes node names from the ROS graph topic, and its graph cache can keep
    a name whose process has left (a graph message handled after the removal of its sender adds the sender back, and
    nothing removes it again). Waiting for the name to go, a sampler was once still serving minutes after its
    trainer had exited, while the discriminator, on the same check, had stopped within seconds; and any node of
    that name on the domain held both. A client is a pair of DDS endpoints, which discovery removes when their
    process leaves (at once on a clean exit, after the lease duration when it was killed). A client alone is not
    enough either: a tool or a test calling the service is no trainer waiting for its checkpoint."""
    def linger(node: Node) -> bool:
        return (node.count_clients(service) > 0
                and (TRAINER_NODE, node.get_namespace()) in node.get_node_names_and_namespaces())

    return linger
