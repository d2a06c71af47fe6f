"""The run configuration every ADR node builds from the same ROS parameters.

``run_spec`` (JSON of ``adr_core.run_spec.RunSpec``, computed once by the launcher) carries the resolved config, the
env's shapes and space, the proposals per iteration and the run id every message of the run carries (``spec.run_id``):
a node reads what it needs from it and builds no env or sampler just to learn a shape. Without it (a node started on
its own), ``config_file`` (experiment YAML, empty = paper defaults) + ``overrides`` (YAML mapping of dotted keys) are
resolved here, and ``run_id`` (default empty) is the node's run id. A node gets one config: ``run_spec`` given with
``config_file`` or ``overrides`` is refused. ``run_dir`` is where the run's files go.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node

from adr_core.base.devices import configure_torch
from adr_core.run_spec import RunSpec, check_run_id
from adr_core.training.config import ConfigError, TrainConfig
from adr_ros.signing import KeyError_, RunSigning


def declare_run(node: Node, default_torch_threads: int = 1) -> tuple[TrainConfig, Path, RunSpec]:
    """Declare ``config_file``, ``overrides``, ``run_dir``, ``torch_threads``, ``run_spec``, ``run_id`` on ``node``;
    build the run's config.

    ``torch_threads`` defaults to 1 for helper nodes: several torch processes share the cores, and each
    defaulting to all of them oversubscribes the machine (the learner passes 0: the config's own setting).
    Raises ConfigError naming the bad key or file; callers log it and exit non-zero.
    """
    config_file = node.declare_parameter(
        "config_file",
        "",
        ParameterDescriptor(description="Experiment YAML (adr-train --config); empty: paper defaults", read_only=True),
    ).value
    overrides = node.declare_parameter(
        "overrides", "{}", ParameterDescriptor(
            description="YAML mapping of dotted config keys, e.g. {seed: 1, total_agent_steps: 20000}",
            read_only=True)).value
    run_dir = node.declare_parameter(
        "run_dir", "runs/adr", ParameterDescriptor(description="Run directory: logs, config.yaml, checkpoints/",
                                                   read_only=True)).value
    threads = node.declare_parameter(
        "torch_threads",
        default_torch_threads,
        ParameterDescriptor(
            description="torch.set_num_threads for this process; 0: the run config's torch_threads", read_only=True
        ),
    ).value
    spec_text = node.declare_parameter(
        "run_spec", "", ParameterDescriptor(
            description="The run's resolved specification (JSON, adr_core.run_spec), computed once by the launcher; "
                        "empty: resolved from config_file and overrides", read_only=True)).value
    if spec_text:
        if config_file or overrides.strip() not in ("", "{}"):
            raise ConfigError("run_spec holds the run's config: give it alone, or config_file and overrides without "
                              "it (a node started on its own)")
        spec = RunSpec.from_json(spec_text)
        config = spec.train_config()
    else:
        config = build_config(config_file, overrides)
        spec = RunSpec.resolve(config)
    # declared once the spec is known, so that `ros2 param get <node> run_id` shows the id the node enforces
    run_id = node.declare_parameter(
        "run_id", spec.run_id, ParameterDescriptor(
            description="The run id this node's messages carry and it accepts (a node started on its own; the "
                        "launchers put it in run_spec). Default: run_spec's, else the empty id", read_only=True)).value
    if run_id != spec.run_id:
        if spec.run_id:
            raise ConfigError(f"run_id {run_id!r} differs from the run id {spec.run_id!r} in run_spec: give one")
        spec = dataclasses.replace(spec, run_id=check_run_id(run_id))
    configure_torch(threads or config.torch_threads, config.flush_denormals)
    return config, Path(run_dir), spec


def declare_signing(node: Node, run_id: str) -> RunSigning:
    """Declare ``key_file`` (the run's key: the launcher creates ``<run_dir>/run.key``) and the node's signer and
    verifier for ``run_id``; no key file, or an unusable one, is a ConfigError naming it."""
    key_file = node.declare_parameter("key_file", "", ParameterDescriptor(
        description="The run's key file (adr_ros.signing): every message of the run is signed and checked with it; "
                    "the launchers create <run_dir>/run.key; a worker host uses a copy", read_only=True)).value
    start = node.declare_parameter("run_start", "", ParameterDescriptor(
        description="This start of the run (a nonce the launcher draws at every launch, resume included): signatures "
                    "cover it, so nothing signed in an earlier start verifies; a worker host gets the head's "
                    "(run_start:=); empty: a node started on its own", read_only=True)).value
    if not key_file:
        raise ConfigError("key_file is empty: every message of a run is signed with the run's key (the launchers "
                          "create <run_dir>/run.key); a node started on its own needs key_file:=<that file>")
    try:
        return RunSigning.from_file(key_file, run_id, node.get_fully_qualified_name(), node.get_logger().warning,
                                    start=start)
    except KeyError_ as error:
        raise ConfigError(str(error)) from None


def build_config(config_file: str, overrides: str) -> TrainConfig:
    config = TrainConfig.from_yaml(config_file) if config_file else TrainConfig()
    try:
        mapping = yaml.safe_load(overrides) or {}
    except yaml.YAMLError as error:
        raise ConfigError(f"overrides is not YAML: {error}") from None
    if not isinstance(mapping, dict):
        raise ConfigError(f"overrides must be a mapping of config keys, got {overrides!r}")
    return config.with_overrides(mapping)
