"""Console entry points of the graph's nodes: Ctrl-C (or SIGTERM) while a node is still importing (torch, rclpy,
simulators: seconds) ends it at once and quietly, with status 0 like any node stopped on request, instead of a
KeyboardInterrupt traceback. The node's own handlers (``lifecycle.stop_on_signals``) replace these once it runs.

Only this module and ``importlib`` are loaded before the handlers are in place."""
from __future__ import annotations

import importlib
import signal
from types import FrameType


def _stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def _run(module: str) -> int:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _stop)
    status: int = importlib.import_module(module).main()
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
