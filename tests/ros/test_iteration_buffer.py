"""The discriminator's iteration buffer under the graph's one acceptance rule (issue 30): it scores the trajectories
the trainer accepted, whichever copies came first, with bounded memory."""
from __future__ import annotations

import dataclasses

import pytest
from test_message_conversions import make_trajectory

from adr_core.rollout import Trajectory, trajectory_digest
from adr_discriminator_node.iteration_buffer import MAX_COPIES, IterationBuffer, TrajectoryRefused


def trajectory(iteration: int, slot: int, kind: str = "randomized", seed: int = 0, version: int = 1) -> Trajectory:
    t = make_trajectory(seed=10 * slot + seed)
    return dataclasses.replace(t, iteration=iteration, slot=slot, kind=kind, policy_version=version)


def acceptance(items: list[Trajectory]) -> list[tuple[str, int, str]]:
    return [(t.kind, t.slot, trajectory_digest(t)) for t in items]


def add(buffer: IterationBuffer, t: Trajectory) -> None:
    buffer.add(t, trajectory_digest(t))


def test_the_accepted_copy_is_scored_whichever_came_first():
    buffer = IterationBuffer(slots=2, next_iteration=0, max_ahead=2)
    real = [trajectory(0, s) for s in range(2)] + [trajectory(0, s, "reference") for s in range(2)]
    forged = dataclasses.replace(real[0], policy_version=2**62)
    add(buffer, forged)  # the forgery first
    for t in real:
        add(buffer, t)
    assert buffer.pop_complete() is None  # nothing before the trainer's word
    buffer.accept(0, acceptance(real))
    done = buffer.pop_complete()
    assert done is not None and done.randomized == real[:2] and done.reference == real[2:]
    assert buffer.buffered == 0 and buffer.next_iteration == 1


def test_after_the_acceptance_only_the_named_copies_get_in_and_copies_are_bounded():
    buffer = IterationBuffer(slots=1, next_iteration=0, max_ahead=2)
    real = [trajectory(0, 0), trajectory(0, 0, "reference")]
    for seed in range(1, MAX_COPIES + 1):
        add(buffer, trajectory(0, 0, seed=seed))
    with pytest.raises(TrajectoryRefused) as refused:
        add(buffer, real[0])  # memory is bounded: a flood of copies can crowd out the real one ...
    assert refused.value.reason == "too_many_copies"
    buffer.accept(0, acceptance(real))  # ... until the trainer's word frees the others
    assert buffer.buffered == 0
    with pytest.raises(TrajectoryRefused) as refused:
        add(buffer, trajectory(0, 0, seed=99))
    assert refused.value.reason == "not_accepted"
    add(buffer, real[0])
    add(buffer, real[1])
    assert buffer.pop_complete() is not None


def test_a_reference_slot_the_trainer_did_not_receive_is_filled_with_the_first_copy_here():
    buffer = IterationBuffer(slots=2, next_iteration=0, max_ahead=2)
    randomized = [trajectory(0, s) for s in range(2)]
    references = [trajectory(0, s, "reference") for s in range(2)]
    for t in randomized + references:
        add(buffer, t)
    buffer.accept(0, acceptance(randomized + references[:1]))  # slot 1's reference missed the trainer
    done = buffer.pop_complete()
    assert done is not None and done.reference == references


def test_malformed_or_contradicting_acceptances_are_refused():
    buffer = IterationBuffer(slots=2, next_iteration=3, max_ahead=2)
    good = acceptance([trajectory(3, s) for s in range(2)])
    cases = {"stale": (2, good), "too_far_ahead": (9, good), "acceptance": (3, good[:1])}
    for reason, (iteration, entries) in cases.items():
        with pytest.raises(TrajectoryRefused) as refused:
            buffer.accept(iteration, entries)
        assert refused.value.reason == reason
    with pytest.raises(TrajectoryRefused):
        buffer.accept(3, good + good[:1])  # a slot twice
    buffer.accept(3, good)
    with pytest.raises(TrajectoryRefused) as refused:
        buffer.accept(3, good)
    assert refused.value.reason == "duplicate"
    with pytest.raises(TrajectoryRefused) as refused:
        buffer.accept(3, acceptance([trajectory(3, s, seed=5) for s in range(2)]))
    assert refused.value.reason == "acceptance"


def test_the_digest_changes_with_any_value_and_not_with_a_copy():
    t = trajectory(0, 0)
    assert trajectory_digest(t) == trajectory_digest(dataclasses.replace(t, obs=t.obs.copy()))
    rewards = t.rewards.copy()
    rewards[3] += 1e-3
    for changed in (dataclasses.replace(t, rewards=rewards), dataclasses.replace(t, policy_version=2),
                    dataclasses.replace(t, slot=1), dataclasses.replace(t, kind="reference")):
        assert trajectory_digest(changed) != trajectory_digest(t)
