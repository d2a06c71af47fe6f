"""Sampler node: proposes simulator settings from the randomization space.

Serves ``adr/propose_parameters`` (adr_interfaces/srv/ProposeParameters): each call is one sampler iteration;
the proposals are returned and also published on ``adr/proposals`` for inspection.
"""
from __future__ import annotations

import sys

import numpy as np
import rclpy
from adr_core.randomization import RandomizationError, load_space
from adr_interfaces.msg import ParameterSet
from adr_interfaces.srv import ProposeParameters
from adr_ros import parameter_sets, qos, topics
from rcl_interfaces.msg import IntegerRange, ParameterDescriptor
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node


class SamplerNode(Node):
    def __init__(self) -> None:
        super().__init__("adr_sampler")
        env_id = self.declare_parameter(
            "env_id",
            "adr/LunarLander-v0",
            ParameterDescriptor(description="Environment id whose randomization space is sampled", read_only=True),
        ).value
        self._batch_size = self.declare_parameter(
            "batch_size",
            10,
            ParameterDescriptor(
                description="Settings per iteration when a request asks for 0",
                integer_range=[IntegerRange(from_value=1, to_value=4096, step=1)],
            ),
        ).value
        seed = self.declare_parameter(
            "seed", 0, ParameterDescriptor(description="Seed of the sampler's random generator", read_only=True)
        ).value
        self._space = load_space(env_id)
        self._rng = np.random.default_rng(seed)
        self._iteration = 0
        self._publisher = self.create_publisher(ParameterSet, topics.PROPOSALS, qos.RELIABLE_STREAM)
        self.create_service(ProposeParameters, topics.PROPOSE_SERVICE, self._on_propose)
        self.get_logger().info(f"sampling {self._space.ndim}-D space of {env_id}: {', '.join(self._space.names)}")

    def _on_propose(
        self, request: ProposeParameters.Request, response: ProposeParameters.Response
    ) -> ProposeParameters.Response:
        count = request.count or self._batch_size
        try:
            normalized = self._space.sample_uniform(self._rng, count)
            physical = self._space.from_normalized(normalized)
        except RandomizationError as error:
            response.success, response.message = False, str(error)
            return response
        stamp = self.get_clock().now().to_msg()
        for slot in range(count):
            proposal = parameter_sets.Proposal(
                self._space.env_id, self._iteration, slot, tuple(self._space.names), physical[slot], normalized[slot]
            )
            msg = parameter_sets.to_msg(proposal)
            msg.header.stamp = stamp
            response.proposals.append(msg)
            self._publisher.publish(msg)
        response.success, response.message = True, f"iteration {self._iteration}: {count} proposals"
        self._iteration += 1
        return response


def main(args: list[str] | None = None) -> int:
    rclpy.init(args=args if args is not None else sys.argv)
    node = SamplerNode()
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
