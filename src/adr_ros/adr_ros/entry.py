"""Console entry points of the graph's nodes: Ctrl-C (or SIGTERM) while a node is still importing (torch, rclpy,
simulators: seconds) ends it at once and quietly, with status 0 like any node stopped on request, instead of a
KeyboardInterrupt traceback. The node's own handlers (``lifecycle.stop_on_signals``) replace these once it runs.

Only this module and ``importlib`` are loaded before the handlers are in place. A signal that lands inside a C
extension's initialization (rclpy's pybind11 module) reaches Python as an ``ImportError`` ("initialization failed")
instead of the ``SystemExit``; once a stop was asked for, that error also ends the node quietly with 0.

``kill -USR1 <pid>`` makes a node print every thread's Python stack to its stderr (the launcher's log) and go on:
what a node that seems hung is waiting for."""
from __future__ import annotations

import faulthandler
import importlib
import signal
from types import FrameType

_stopping = False  # a stop signal arrived before the node's own handlers took over


def _stop(signum: int, frame: FrameType | None) -> None:
    global _stopping
    _stopping = True
    raise SystemExit(0)


def _run(module: str) -> int:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _stop)
    faulthandler.register(signal.SIGUSR1, all_threads=True, chain=False)
    try:
        node = importlib.import_module(module)
    except ImportError:
        if _stopping:  # the SystemExit of _stop, turned into an ImportError by a C extension's init
            return 0
        raise
    status: int = node.main()
    return status


def sim_node() -> int:
    return _run("adr_sim_node.node")


def sampler_node() -> int:
    return _run("adr_sampler_node.node")


def discriminator_node() -> int:
    return _run("adr_discriminator_node.node")


def trainer_node() -> int:
    return _run("adr_trainer_node.node")


def viewer_node() -> int:
    return _run("adr_viewer.node")
