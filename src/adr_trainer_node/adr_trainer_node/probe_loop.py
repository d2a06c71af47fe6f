"""The trainer node's ``mode:=probe``: adr-probe as a node graph, run by the core's ``Probe``.

The sampler and discriminator nodes run as in training; the simulator instances roll out the frozen policy (their
``frozen_policy`` parameter). ``adr_core.probe.Probe`` measures the failure map, runs the iterations and records
them, as in adr-probe; its engine here has the graph's steps (graph_steps.py) on the real clock, with no agent: no
update, no weights published (a checkpoint's actor is published once, as version 0, for any instance that would
rather take it from the topic). This module only schedules it on the graph and logs. Files in ``run_dir``: the
probe's (adr_core/probe/record.py).
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from adr_core.engine.loop import Engine
from adr_core.probe import FrozenPolicy, Probe, Sweep
from adr_ros import policy_weights
from adr_trainer_node.graph_steps import GraphSteps


class ProbeHost(Protocol):
    """What the probe loop uses of the trainer node (node.py): its run, the graph's steps and its logger."""

    config: Any
    run_dir: Path
    run_id: str
    space: Any
    agent: Any
    steps: GraphSteps
    run: Engine
    stop_requested: threading.Event

    def get_logger(self) -> Any: ...


def run_probe(node: ProbeHost, frozen: FrozenPolicy, iterations: int) -> dict[str, Any]:
    config, log, steps = node.config, node.get_logger(), node.steps
    # the engine with no agent, as the in-process probe runs it (no updates, nothing published), over the graph
    node.run = Engine(None, config, steps, stop_requested=node.stop_requested, real_clock=True, warn=log.warning)
    probe = Probe(config, frozen, node.space, node.run, node.run_dir, sweep=Sweep(workers=1))
    probe.measure_failures(log.info)
    steps.wait_for_graph()
    if frozen.weights is not None:
        import torch

        weights = {k: torch.from_numpy(np.asarray(v, dtype=np.float32)) for k, v in frozen.weights.items()}
        steps.weights_pub.publish(policy_weights.to_msg(weights, version=0, algorithm="frozen",
                                                       obs_dim=node.agent.obs_dim, act_dim=node.agent.act_dim,
                                                       run_id=node.run_id))
    focus = probe.run(iterations, lambda text: log.info(f"probe {text}")).focus
    if node.run.failure is not None:
        log.error(f"probe stopped: {node.run.failure}")
    log.info(f"probe done: share in the failure region / uniform = {focus['ratio_second_half']:.2f} (second half), "
             f"{focus['ratio_last_quarter']:.2f} (last quarter); files in {node.run_dir}")
    return focus
