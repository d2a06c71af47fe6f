"""Each node's declared ``run_id`` parameter is the id it enforces (``ros2 param get <node> run_id`` tells the truth),
whether the id comes in run_spec (the launchers) or as the parameter itself (a node started on its own)."""
from __future__ import annotations

import dataclasses

import pytest
import rclpy
from rclpy.context import Context
from rclpy.node import Node
from rclpy.parameter import Parameter

from adr_core.run_spec import RunSpec
from adr_core.training.config import ConfigError, TrainConfig
from adr_ros.run_config import declare_run


def declared(parameters: dict[str, str]) -> tuple[str, str]:
    """(the node's run_id parameter, the spec's run id) for a node given ``parameters``."""
    context = Context()
    rclpy.init(context=context)
    try:
        node = Node("run_id_probe", context=context,
                    parameter_overrides=[Parameter(k, value=v) for k, v in parameters.items()])
        _, _, spec = declare_run(node)
        value = node.get_parameter("run_id").value
        node.destroy_node()
        return value, spec.run_id
    finally:
        rclpy.shutdown(context=context)


def spec_json(run_id: str) -> str:
    config = TrainConfig.from_dict({"env_id": "adr/LunarLander-v0", "svpg": {"num_particles": 2}})
    return dataclasses.replace(RunSpec.resolve(config), run_id=run_id).to_json()


def test_the_parameter_shows_the_id_of_run_spec() -> None:
    assert declared({"run_spec": spec_json("head-7")}) == ("head-7", "head-7")


def test_a_node_started_on_its_own_takes_the_parameter() -> None:
    assert declared({"run_id": "solo-1"}) == ("solo-1", "solo-1")
    assert declared({}) == ("", "")


def test_two_different_ids_are_refused() -> None:
    with pytest.raises(ConfigError, match="run_id 'x' differs from the run id 'head-7' in run_spec"):
        declared({"run_spec": spec_json("head-7"), "run_id": "x"})


def test_a_node_gets_one_config_run_spec_or_config_file_and_overrides() -> None:
    """Issue 62: the launchers hand a node its config once, in run_spec; config_file or overrides beside it (which the
    node would have ignored) are refused, and a node on its own still resolves them."""
    for other in ({"config_file": "lunar_lander_adr.yaml"}, {"overrides": "{seed: 3}"}):
        with pytest.raises(ConfigError, match="run_spec holds the run's config: give it alone"):
            declared({"run_spec": spec_json("head-7"), **other})
    assert declared({"run_spec": spec_json("head-7"), "overrides": "{}"}) == ("head-7", "head-7")
    assert declared({"overrides": "{seed: 3}", "run_id": "solo-2"}) == ("solo-2", "solo-2")
