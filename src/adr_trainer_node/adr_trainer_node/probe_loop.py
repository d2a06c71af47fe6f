"""The trainer node's ``mode:=probe``: adr-probe as a node graph.

The sampler and discriminator nodes run as in training; the simulator instances roll out the frozen policy (their
``frozen_policy`` parameter); this loop asks for proposals, dispatches the rollouts, takes the discriminator's
rewards and records every iteration with ``adr_core.probe.ProbeRecorder``, the writer of the in-process probe. No
agent update, no weights published (a checkpoint's actor is published once, as version 0, for any instance that
would rather take it from the topic). Files in ``run_dir``: the probe's (adr_core/probe/record.py).
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from adr_core.engine.loop import Engine
from adr_core.probe import FrozenPolicy, ProbeRecorder, measure_failure_map, probe_options
from adr_core.probe.probe import ProbeResult, ShareHook
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


SWEEP_POINTS, SWEEP_EPISODES, SWEEP_SEEDS = 13, 5, (0, 1)  # adr-probe's defaults


def run_probe(node: ProbeHost, frozen: FrozenPolicy, iterations: int) -> dict[str, Any]:
    config, log = node.config, node.get_logger()
    options = probe_options(frozen, 0.0, SWEEP_POINTS, SWEEP_EPISODES, SWEEP_SEEDS)
    recorder = ProbeRecorder(node.run_dir, node.space, config, options)
    started = time.perf_counter()
    failure_map, region = measure_failure_map(frozen, config, SWEEP_POINTS, SWEEP_EPISODES, SWEEP_SEEDS,
                                              workers=1)
    recorder.write_failure_map(failure_map, region)
    log.info(f"failure map ({time.perf_counter() - started:.0f} s): the policy fails at "
             f"{region.describe(node.space)} (uniform share {region.uniform_share:.2f})")
    steps = node.steps
    steps.wait_for_graph()
    if frozen.weights is not None:
        import torch

        weights = {k: torch.from_numpy(np.asarray(v, dtype=np.float32)) for k, v in frozen.weights.items()}
        steps.weights_pub.publish(policy_weights.to_msg(weights, version=0, algorithm="frozen",
                                                       obs_dim=node.agent.obs_dim, act_dim=node.agent.act_dim,
                                                       run_id=node.run_id))
    started = time.perf_counter()
    shares = ShareHook(recorder, ProbeResult(region), iterations, lambda text: log.info(f"probe {text}"))
    # the engine with no agent, as the in-process probe runs it: no updates, nothing published
    node.run = Engine(None, config, steps, stop_requested=node.stop_requested, real_clock=True,
                      warn=log.warning)
    node.run.start([shares])  # the in-process probe's bookkeeping: record, log every 10
    node.run.run(max_iterations=iterations)
    if node.run.failure is not None:
        log.error(f"probe stopped: {node.run.failure}")
    focus = recorder.finish(time.perf_counter() - started, config.seed)
    log.info(f"probe done: share in the failure region / uniform = {focus['ratio_second_half']:.2f} (second half), "
             f"{focus['ratio_last_quarter']:.2f} (last quarter); files in {node.run_dir}")
    return focus
