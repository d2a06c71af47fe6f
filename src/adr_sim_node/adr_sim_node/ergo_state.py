"""The simulated Ergo Jr arm for rviz: JointState (all six joints) and the goal, rate-limited, during rollouts."""
from __future__ import annotations

import time

import gymnasium as gym
from geometry_msgs.msg import PointStamped
from rclpy.node import Node
from sensor_msgs.msg import JointState

from adr_core.rollout import Policy


def is_ergo(env: gym.Env) -> bool:
    unwrapped = env.unwrapped
    return all(hasattr(unwrapped, name) for name in ("joint_names", "joint_positions", "goal_position"))


class ErgoStatePublisher:
    """Publishes the arm state on ``joint_states`` and the goal on ``~/goal`` at most ``rate_hz`` times a second."""

    def __init__(self, node: Node, rate_hz: float, goal_frame_id: str) -> None:
        self._node = node
        self._period = 1.0 / rate_hz
        self._goal_frame_id = goal_frame_id
        self._next_publish = 0.0
        self._joints = node.create_publisher(JointState, "joint_states", 10)
        self._goal = node.create_publisher(PointStamped, "~/goal", 10)
        self.published = 0

    def observing(self, env: gym.Env, policy: Policy) -> Policy:
        """``policy`` (and its ``explore``), publishing the state ``env`` is in when called (before each step) if a
        period has passed."""
        return _ObservedPolicy(self, env.unwrapped, policy)

    def maybe_publish(self, arm) -> None:
        now = time.monotonic()
        if now >= self._next_publish:
            self._next_publish = now + self._period
            self._publish(arm)

    def _publish(self, arm) -> None:
        stamp = self._node.get_clock().now().to_msg()
        joints = JointState(name=list(arm.joint_names), position=arm.joint_positions().tolist(),
                            velocity=arm.joint_velocities().tolist())
        joints.header.stamp = stamp
        goal = PointStamped()
        goal.header.stamp = stamp
        goal.header.frame_id = self._goal_frame_id
        x, y, z = (*(float(v) for v in arm.goal_position), 0.0)[:3]  # ErgoPusher's goal is (x, y) on the table
        goal.point.x, goal.point.y, goal.point.z = x, y, z
        self._joints.publish(joints)
        self._goal.publish(goal)
        self.published += 1


class _ObservedPolicy:
    """``policy`` as the rollout sees it (its ``explore``, and a policy with memory's ``begin_episode`` and
    ``remember``), publishing the arm's state before each action."""

    def __init__(self, publisher: ErgoStatePublisher, arm, policy: Policy) -> None:
        self._publisher, self._arm, self._policy = publisher, arm, policy
        if hasattr(policy, "explore"):
            self.explore = self._explore
        for name in ("begin_episode", "remember"):  # a policy with memory: its history must see every episode
            if hasattr(policy, name):
                setattr(self, name, getattr(policy, name))

    def __call__(self, obs):
        self._publisher.maybe_publish(self._arm)
        return self._policy(obs)

    def _explore(self, obs, rng, scale):
        self._publisher.maybe_publish(self._arm)
        return self._policy.explore(obs, rng, scale)  # type: ignore[attr-defined]  # hasattr-checked above
