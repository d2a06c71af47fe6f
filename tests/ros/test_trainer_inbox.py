"""The trainer's trajectory inbox: what it accepts, what it refuses and why, and that nothing accepted is lost."""
from __future__ import annotations

import numpy as np
from test_message_conversions import make_trajectory

from adr_ros import trajectories
from adr_ros.arrays import to_field
from adr_trainer_node.inbox import TrajectoryInbox


def message(iteration: int, slot: int, kind: str = "randomized", **changes):
    trajectory = make_trajectory(seed=slot)
    trajectory.iteration, trajectory.slot, trajectory.kind = iteration, slot, kind
    msg = trajectories.to_msg(trajectory, env_id="adr/LunarLander-v0", names=["main_engine_power"], instance_id="sim")
    for field, value in changes.items():
        setattr(msg, field, value)
    return msg


def test_accepts_takes_in_slot_order_and_refuses_with_reasons() -> None:
    inbox = TrajectoryInbox(obs_dim=8, act_dim=2)
    assert inbox.offer(message(0, 1)) is None
    assert inbox.offer(message(0, 0)) is None
    assert inbox.offer(message(0, 0)).startswith("duplicate: iteration 0 slot 0")
    assert inbox.offer(message(0, 2, kind="reference")).startswith("ignored")
    assert inbox.offer(message(0, 3, rewards=to_field(np.full(7, np.nan, np.float32)))).startswith(
        "malformed: rewards holds NaN")
    assert inbox.offer(message(0, 3, obs_dim=6)).startswith("malformed: obs_dim 6 != 8")
    assert inbox.missing(0, 3) == [2]
    assert inbox.offer(message(1, 0)) is None  # the next iteration may arrive early
    taken = inbox.take(0, 2)
    assert [t.slot for t in taken] == [0, 1]
    assert inbox.offer(message(0, 1)).startswith("stale: iteration 0")
    assert inbox.missing(1, 1) == []


def test_transport_time_is_summed_per_iteration() -> None:
    inbox = TrajectoryInbox(obs_dim=8, act_dim=2)
    msg = message(4, 0)
    msg.header.stamp.sec, msg.header.stamp.nanosec = 10, 0
    inbox.offer(msg, received_ns=10_250_000_000)
    assert abs(inbox.transport_seconds(4) - 0.25) < 1e-9
    assert inbox.transport_seconds(4) == 0.0
