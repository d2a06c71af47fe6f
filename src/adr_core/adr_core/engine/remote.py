"""Algorithm 1 when other processes carry out its steps (the ROS 2 node graph): the engine on the real clock.

The trainer node supplies the steps (``steps.Steps``; its implementation over services, actions and topics is
``adr_trainer_node/graph_steps.py``) and the hooks that are the graph's own (progress topics, the graph's
checkpoint); ``remote_engine`` is the engine as the graph runs it: its training time is real time since the start
less the periodic evaluations (async iterations overlap), and each learning block takes an undo point, so that an
iteration whose feedback never came leaves the agent at its state after the previous one.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from .loop import Engine, LoopConfig

if TYPE_CHECKING:
    from ..agents import OffPolicyAgent
    from .steps import Steps


def remote_engine(agent: OffPolicyAgent, config: LoopConfig, steps: Steps, *, overlap: bool,
                  stop_requested: threading.Event, iteration: int = 0, wall_time: float = 0.0,
                  warn: Callable[[str], None] = print) -> Engine:
    """A training run whose rollouts, rewards and sampler updates happen elsewhere; the agent learns here.
    ``overlap``: the graph's async mode."""
    return Engine(agent, config, steps, overlap=overlap, stop_requested=stop_requested, iteration=iteration,
                  wall_time=wall_time, real_clock=True, undo_points=True, warn=warn)
