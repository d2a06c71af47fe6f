"""The trainer's trajectory inbox: what it accepts, what it refuses and why, and that nothing accepted is lost."""
from __future__ import annotations

import numpy as np
from test_message_conversions import make_trajectory

from adr_ros import trajectories
from adr_ros.arrays import to_field
from adr_trainer_node.inbox import Expected, TrajectoryInbox

SETTINGS = np.array([[9.0], [12.5], [17.0]])  # the settings dispatched for slots 0-2
REFERENCE = np.array([13.0])


def message(iteration: int, slot: int, kind: str = "randomized", version: int = 5, **changes):
    trajectory = make_trajectory(seed=slot)
    trajectory.iteration, trajectory.slot, trajectory.kind = iteration, slot, kind
    trajectory.policy_version = version
    trajectory.params = REFERENCE.copy() if kind == "reference" else SETTINGS[min(slot, 2)].copy()
    msg = trajectories.to_msg(trajectory, env_id="adr/LunarLander-v0", names=["main_engine_power"], instance_id="sim")
    for field, value in changes.items():
        setattr(msg, field, value)
    return msg


def with_setting(msg, value: float):
    msg.parameters.values = np.array([value], np.float64)
    return msg


def inbox_expecting(iteration: int, kinds=("randomized",), min_version: int = 5, published: int = 6):
    inbox = TrajectoryInbox(obs_dim=8, act_dim=2, kinds=kinds)
    inbox.note_published(published)
    inbox.expect(Expected(iteration, SETTINGS, REFERENCE, min_version))
    return inbox


def test_accepts_takes_in_slot_order_and_refuses_with_reasons() -> None:
    inbox = inbox_expecting(0)
    assert inbox.offer(message(0, 1)) is None
    assert inbox.offer(message(0, 0)) is None
    assert inbox.offer(message(0, 0)).startswith("duplicate: iteration 0 slot 0")
    assert inbox.offer(message(0, 2, kind="reference")).startswith("ignored")
    assert inbox.offer(message(0, 2, rewards=to_field(np.full(7, np.nan, np.float32)))).startswith(
        "malformed: rewards holds NaN")
    assert inbox.offer(message(0, 2, obs_dim=6)).startswith("malformed: obs_dim 6 != 8")
    assert inbox.missing(0, 3) == [2]
    taken = inbox.take(0, 2)
    assert [t.slot for t in taken] == [0, 1]
    assert inbox.offer(message(0, 1)).startswith("stale: iteration 0")


def test_refuses_what_the_trainer_did_not_ask_for() -> None:
    """Issue 18: plausible trajectories for a future iteration or slot, another setting, a forged policy version or
    an empty episode are refused, and none of them displaces the real one or costs memory."""
    inbox = inbox_expecting(4, kinds=("randomized", "reference"))
    empty = message(4, 0, length=0, observations=[], actions=[], next_observations=[], rewards=[], terminated=[])
    assert inbox.offer(empty) == "malformed: empty trajectory (length 0)"
    for future in range(5, 65):  # 60 far-future trajectories: refused, nothing held
        assert inbox.offer(message(future, 0)).startswith("unexpected: iteration")
    assert inbox.offer(message(4, 3)).startswith("unexpected: slot 3 does not exist")
    assert inbox.offer(with_setting(message(4, 1), 17.0)).startswith("mismatch: slot 1 ran under [17.0], the "
                                                                     "setting dispatched is [12.5]")
    assert inbox.offer(with_setting(message(4, 0, kind="reference"), 9.0)).startswith("mismatch: slot 0 ran under")
    assert inbox.offer(message(4, 0, version=2**62)).startswith("mismatch: policy version 4611686018427387904")
    assert inbox.offer(message(4, 0, version=4)).startswith("mismatch: policy version 4 outside [5, 6]")
    assert len(inbox._items) == 0
    for slot in range(3):  # the real ones still get in
        assert inbox.offer(message(4, slot)) is None and inbox.offer(message(4, slot, kind="reference")) is None
    inbox.note_published(7)
    assert inbox.offer(message(4, 0, version=7)).startswith("duplicate")  # a newer published version is plausible
    assert [t.slot for t in inbox.take_kinds(4, 3, ("randomized", "reference"))["reference"]] == [0, 1, 2]


def test_another_runs_trajectory_is_refused_before_anything_else() -> None:
    """Issue 18: a well-formed trajectory of the iteration and slot awaited, but of another run (a second run on the
    same DDS domain, an earlier launch), never gets in; this run's own does."""
    inbox = TrajectoryInbox(obs_dim=8, act_dim=2, run_id="run-a")
    inbox.note_published(6)
    inbox.expect(Expected(0, SETTINGS, REFERENCE, 5))
    other = message(0, 0)
    other.run_id = other.parameters.run_id = "run-b"
    assert inbox.offer(other) == "run_id: trajectory of run 'run-b', this is run 'run-a'"
    mixed = message(0, 0)
    mixed.run_id = "run-a"  # its parameters still say '' (another run's)
    assert inbox.offer(mixed).startswith("run_id: trajectory of run 'run-a' with parameters of run ''")
    assert inbox.offer(message(0, 0)).startswith("run_id: trajectory of run ''")  # a node started on its own
    own = message(0, 0)
    own.run_id = own.parameters.run_id = "run-a"
    assert inbox.offer(own) is None


def test_nothing_is_accepted_before_an_iteration_is_announced() -> None:
    inbox = TrajectoryInbox(obs_dim=8, act_dim=2)
    assert inbox.offer(message(0, 0, version=0)).startswith("unexpected: iteration 0 is not being collected "
                                                            "(waiting for no iteration)")


def test_transport_time_is_summed_per_iteration() -> None:
    inbox = inbox_expecting(4)
    msg = message(4, 0)
    msg.header.stamp.sec, msg.header.stamp.nanosec = 10, 0
    inbox.offer(msg, received_ns=10_250_000_000)
    assert abs(inbox.transport_seconds(4) - 0.25) < 1e-9
    assert inbox.transport_seconds(4) == 0.0


def test_values_no_simulator_of_the_run_produces_are_refused_and_the_real_one_still_gets_in() -> None:
    """Issue 30: a well-formed trajectory for the awaited slot with a reward of 1e6 per step (critic loss 5e10 once
    it reached the replay buffer) is refused by the run's per-step bound; the real rollout is accepted after it."""
    from adr_core import plausibility

    bound = plausibility.reward_bound("adr/LunarLander-v0")
    assert bound == 1000.0 and plausibility.reward_bound("adr/LunarLander-v0", 5.0) == 5.0
    inbox = TrajectoryInbox(obs_dim=8, act_dim=2, reward_bound=bound)
    inbox.note_published(6)
    inbox.expect(Expected(0, SETTINGS, REFERENCE, 5))
    real = message(0, 0)
    forged = message(0, 0, rewards=to_field(np.full(real.length, 1e6, np.float32)))
    assert inbox.offer(forged).startswith("implausible: a reward of 1e+06 in one step (this run's bound: +-1000")
    huge_obs = message(0, 0, observations=to_field(np.full(len(real.observations), 1e9, np.float32)))
    assert inbox.offer(huge_obs).startswith("implausible: observations up to 1e+09")
    assert inbox.offer(message(0, 0, episode_return=1e9)).startswith("implausible: episode return")
    assert inbox.offer(real) is None  # nothing of the forgeries was kept
    assert inbox.missing(0, 1) == []
